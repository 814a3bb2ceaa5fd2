package audit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/train"
)

// Verdicts of an audited cell (Cell.Verdict).
const (
	Pass    = "pass"
	Fail    = "fail"
	NoPrint = "no fingerprints" // the result predates fingerprints, or lacks some rounds
	Corrupt = "corrupt"         // a recorded output no longer matches its digest
	// Unchecked: made on a backend this machine lacks, and no cross-backend check could
	// stand in (the result keeps no sketch): nothing was recomputed.
	Unchecked = "unchecked"
)

// Cross-backend check verdicts (Cell.Cross).
const (
	CrossPass     = "pass"
	CrossFail     = "fail"
	CrossNoSketch = "no sketch kept" // the result predates sketches, or continued one that did
)

// Cell is one kept train result's audit.
type Cell struct {
	Cell string `json:"cell"`
	Key  string `json:"key"`
	// Rounds is how many rounds were recomputed (the audit's N, or fewer for a shorter run).
	Rounds  int    `json:"rounds"`
	Verdict string `json:"verdict"`
	// Round, Recorded and Recomputed name the first round whose digests differ (fail).
	Round      int    `json:"round,omitempty"`
	Recorded   string `json:"recorded,omitempty"`
	Recomputed string `json:"recomputed,omitempty"`
	Note       string `json:"note,omitempty"`
	// Provenance is the provenance recorded with the audited result.
	Provenance *pipeline.Provenance `json:"provenance,omitempty"`
	// Backend is the family of the backend that made the result ("fpfast", "xla-cuda").
	Backend string `json:"backend,omitempty"`
	// Bitwise says the first rounds were recomputed on that backend with equal fingerprints.
	Bitwise bool `json:"bit_for_bit,omitempty"`
	// Cross is the cross-backend check of a result made on a backend other than the
	// reference one (CrossCheck): empty for a reference result.
	Cross     string            `json:"cross_check,omitempty"`
	CrossDiff *train.SketchDiff `json:"cross_check_diff,omitempty"`
}

// KeptTrainNodes lists g's train stages that have a result recorded in store, in graph
// order (a record whose outputs no longer verify is kept too: the audit reports it).
func KeptTrainNodes(g *pipeline.Graph, store *artifacts.Store) ([]*pipeline.Node, error) {
	var out []*pipeline.Node
	for _, n := range g.Nodes {
		if n.Kind != manifest.KindTrain {
			continue
		}
		if _, ok, err := store.ActionMeta(artifacts.Digest(n.Key)); err != nil {
			return nil, err
		} else if ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// Sample picks k of nodes with a generator seeded by seed (the same k, seed and
// nodes pick the same cells), kept in graph order.
func Sample(nodes []*pipeline.Node, k int, seed int64) []*pipeline.Node {
	if k <= 0 || k >= len(nodes) {
		return nodes
	}
	idx := rand.New(rand.NewPCG(uint64(seed), 0x61756469740a)).Perm(len(nodes))[:k]
	sort.Ints(idx)
	out := make([]*pipeline.Node, k)
	for i, j := range idx {
		out[i] = nodes[j]
	}
	return out
}

// Node recomputes the first rounds of train stage n and compares their fingerprints
// with those recorded in its result. It trains with the run's full configuration and stops
// after the last audited round (train.Config.StopAfter), so that what depends on the run's
// total rounds (learning-rate schedules, DM-PFL's phases, FedSelect's and FedDST's
// schedules) is what the recorded run had. Nothing is stored: the recomputed state is
// compared and dropped.
func Node(ctx context.Context, n *pipeline.Node, store *artifacts.Store, loader *data.Loader, backend string, rounds int) (Cell, error) {
	key := artifacts.Digest(n.Key)
	c := Cell{Cell: n.Name, Key: n.Key.String()}
	if m, ok, err := store.ActionMeta(key); err != nil {
		return c, err
	} else if ok {
		if p, ok := pipeline.ProvenanceOf(artifacts.Action{Meta: m}); ok {
			c.Provenance = &p
		}
	}
	b, err := results.ReadBlob(store, key, results.OutTrainFingerprints)
	switch {
	case errors.Is(err, results.ErrNoAction):
		c.Verdict, c.Note = Corrupt, "a recorded output is missing or fails its digest check; the result is refused"
		return c, nil
	case errors.Is(err, results.ErrNoOutput):
		c.Verdict, c.Note = NoPrint, "the result was computed before fedpipe recorded fingerprints"
		return c, nil
	case errors.Is(err, results.ErrBlob):
		c.Verdict, c.Note = Corrupt, err.Error()
		return c, nil
	case err != nil:
		return c, err
	}
	recorded, err := train.DecodeFingerprints(b)
	if err != nil {
		c.Verdict, c.Note = Fail, "unreadable fingerprints: "+err.Error()
		return c, nil
	}
	r := n.Run
	c.Rounds = min(rounds, r.Train.Rounds)
	byRound := map[int]train.Fingerprint{}
	for _, f := range recorded {
		byRound[f.Round] = f
	}
	for k := 1; k <= c.Rounds; k++ {
		if _, ok := byRound[k]; !ok {
			c.Verdict, c.Note = NoPrint, fmt.Sprintf("no fingerprint recorded for round %d (continued from an older result)", k)
			return c, nil
		}
	}
	st, err := recomputePrefix(ctx, n, loader, backend, c.Rounds)
	if err != nil {
		return c, err
	}
	c.Verdict = Pass
	for _, f := range st.Fingerprints {
		if f.Round > c.Rounds {
			break
		}
		if want := byRound[f.Round]; want.Digest != f.Digest {
			c.Verdict, c.Round, c.Recorded, c.Recomputed = Fail, f.Round, want.Hex(), f.Hex()
			break
		}
	}
	if c.Verdict == Pass && len(st.Fingerprints) < c.Rounds {
		c.Verdict, c.Note = Fail, fmt.Sprintf("the recomputation recorded %d fingerprints for %d rounds", len(st.Fingerprints), c.Rounds)
	}
	return c, nil
}

// recomputePrefix trains the first rounds of train stage n on backend with the run's full
// configuration, stopping after round rounds (train.Config.StopAfter), on the data and
// partition the stage was planned with.
func recomputePrefix(ctx context.Context, n *pipeline.Node, loader *data.Loader, backend string, rounds int) (*train.State, error) {
	r := n.Run
	ds, err := loader.Load(r.Dataset)
	if err != nil {
		return nil, err
	}
	if n.Data != nil && ds.Digest != n.Data.Digest {
		return nil, fmt.Errorf("%s: dataset %s changed since planning (digest %s, planned %s)", n.Name, ds.Name, ds.Digest, n.Data.Digest)
	}
	assign, err := partition.Make(ds, r.Dataset, r.Partition, r.PartitionSeed()) // as the partition stage draws it (stages/partition_kind.go)
	if err != nil {
		return nil, err
	}
	st, err := train.Run(ctx, train.Config{Run: r, Data: ds, Assign: assign, Backend: backend,
		Lockstep: train.LockstepDefault(backend), StopAfter: rounds})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.Name, err)
	}
	return st, nil
}

// KeptTrainNodesOf lists the train stages of graphs that have a result recorded in store
// (KeptTrainNodes), each stage once however many graphs share it, in graph order.
func KeptTrainNodesOf(graphs []*pipeline.Graph, store *artifacts.Store) ([]*pipeline.Node, error) {
	var nodes []*pipeline.Node
	seen := map[pipeline.Key]bool{}
	for _, g := range graphs {
		kept, err := KeptTrainNodes(g, store)
		if err != nil {
			return nil, err
		}
		for _, n := range kept {
			if !seen[n.Key] {
				seen[n.Key] = true
				nodes = append(nodes, n)
			}
		}
	}
	return nodes, nil
}
