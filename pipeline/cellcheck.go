package pipeline

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/manifest"
)

// Evidence names itself: the summary an evaluate or shift stage writes labels, in its
// table metadata, the run it was computed for ("run", "method", "seed"; the evaluate
// stage's since it first wrote summaries). Every result a reader did not compute itself —
// a kept result (verify/kept's Fetch), a pull (Pull), a worker's or run's fetch from a remote
// (Executor.fetch) — is checked against the cell it was asked for before its entry is
// written into the local store, so entries pointed at another cell's blobs fail, however
// consistently the entries (their outputs, sizes and bindings, the kept index) were
// edited: the blobs are content-addressed, and the label is inside the summary's bytes.
// What the check cannot catch is a summary forged whole (new bytes under a new digest that
// claim the asked-for run): only a signature by whoever computed it could.

// ErrWrongCell matches (errors.Is) the error of a result whose outputs name another run
// than the one asked for.
var ErrWrongCell = errors.New("result computed for another cell")

// wrongCell is CheckIdentity's error: the stage asked for and the run its summary names.
type wrongCell struct {
	asked, holds, why string
}

func (e *wrongCell) Error() string {
	return fmt.Sprintf("the result of %q is the result of %q: %s", e.asked, e.holds, e.why)
}

func (e *wrongCell) Is(target error) bool { return target == ErrWrongCell }

// CheckIdentity checks that the outputs of a, a result of stage n read from elsewhere,
// were computed for n's run: an evaluate or shift stage's summary (already in store,
// verified) must label the run, method and seed of n when it labels them. Other stages'
// outputs carry no label and pass (their entries are bound by key, outputs and sizes), as
// does a summary that is not a table (its reader fails on it).
func CheckIdentity(store *artifacts.Store, n *Node, a artifacts.Action) error {
	if n.Run == nil || (n.Kind != manifest.KindEvaluate && n.Kind != manifest.KindShift) {
		return nil
	}
	d, ok := a.Outputs["summary"]
	if !ok {
		return nil
	}
	b, err := store.Get(d)
	if err != nil {
		return err
	}
	t, err := table.Decode(b)
	if err != nil {
		return nil // no label to check: whoever reads the summary says it is not a table
	}
	want := []struct{ key, value string }{{"run", n.Run.Label()}, {"seed", strconv.FormatInt(n.Run.Seed, 10)}}
	if n.Kind == manifest.KindEvaluate {
		want = append(want, struct{ key, value string }{"method", n.Run.Method})
	}
	for _, w := range want {
		got, ok := t.Meta[w.key]
		if !ok || got == w.value {
			continue
		}
		holds := n.Kind + " " + t.Meta["run"]
		return &wrongCell{asked: n.Name, holds: holds,
			why: fmt.Sprintf("its summary %s says %s %q where this cell's is %q (an entry pointed at another cell's blobs)", d.Short(), w.key, got, w.value)}
	}
	return nil
}
