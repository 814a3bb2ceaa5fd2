package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/train"
	"github.com/fedpipe/fedpipe/verify/kept"
)

// CrossCheck checks a kept train result made on another backend against the reference
// CPU backend: it recomputes round train.SketchRound on fpfast and compares the sketch of
// that state with the one kept with the result (train.CompareSketches: per tensor, the
// relative difference of its norm and projections), passing when no tensor's exceeds
// `backend --check`'s tolerance. Two backends round differently, so their bits differ, but
// a genuine result of either lies within the tolerance; a forged or damaged one does not.
func CrossCheck(ctx context.Context, n *pipeline.Node, store *artifacts.Store, loader *data.Loader, tol float64) (string, *train.SketchDiff, error) {
	b, err := results.ReadBlob(store, artifacts.Digest(n.Key), results.OutTrainSketch)
	switch {
	case errors.Is(err, results.ErrNoAction):
		return CrossFail, nil, nil
	case errors.Is(err, results.ErrNoOutput):
		return CrossNoSketch, nil, nil
	case errors.Is(err, results.ErrBlob):
		return CrossFail, &train.SketchDiff{Mismatch: err.Error()}, nil
	case err != nil:
		return "", nil, err
	}
	kept, err := train.DecodeSketch(b)
	if err != nil {
		return CrossFail, &train.SketchDiff{Mismatch: err.Error()}, nil
	}
	st, err := recomputePrefix(ctx, n, loader, model.CPUBackend, kept.Round)
	if err != nil {
		return "", nil, err
	}
	if st.Sketch == nil {
		return CrossFail, &train.SketchDiff{Mismatch: fmt.Sprintf("the recomputation kept no sketch of round %d", kept.Round)}, nil
	}
	diff := train.CompareSketches(st.Sketch, kept)
	if !diff.OK(tol) {
		return CrossFail, &diff, nil
	}
	return CrossPass, &diff, nil
}

// BackendHere is model.BackendHere; tests replace it to play a backend this machine lacks.
var BackendHere = model.BackendHere

// Kept audits one kept train result of `fedpipe reproduced --audit`: bit for bit
// (Node) on the backend that made it when that backend is here (primary, the
// configuration the reference graph was built with, or model.BackendHere's), and, for a
// result of a backend other than the reference one, the cross-backend check (CrossCheck).
// A result of a backend this machine lacks passes on the cross-backend check alone, and
// says so.
func Kept(ctx context.Context, n *pipeline.Node, store *artifacts.Store, loader *data.Loader, primary string, rounds int, tol float64) (Cell, error) {
	fam := kept.NodeFamily(n)
	here, why := primary, ""
	if n.Backend != model.BackendID(primary) {
		here, why = BackendHere(n.Backend)
	}
	var c Cell
	var err error
	if here != "" {
		if c, err = Node(ctx, n, store, loader, here, rounds); err != nil {
			return c, err
		}
		c.Bitwise = c.Verdict == Pass
	} else {
		c = Cell{Cell: n.Name, Key: n.Key.String(), Verdict: Unchecked, Note: "not audited bit for bit: " + why}
	}
	c.Backend = fam
	if fam == kept.ReferenceFamily {
		return c, nil
	}
	c.Cross, c.CrossDiff, err = CrossCheck(ctx, n, store, loader, tol)
	if err != nil {
		return c, err
	}
	switch {
	case c.Cross == CrossFail:
		c.Verdict = Fail
	case c.Cross == CrossPass && c.Verdict == Unchecked:
		c.Verdict = Pass
	}
	return c, nil
}
