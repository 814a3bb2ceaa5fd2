package audit

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/train"
)

func nodes(n int) []*pipeline.Node {
	out := make([]*pipeline.Node, n)
	for i := range out {
		out[i] = &pipeline.Node{Name: string(rune('a' + i))}
	}
	return out
}

func TestSampleIsSeededAndOrdered(t *testing.T) {
	all := nodes(8)
	a, b := Sample(all, 3, 7), Sample(all, 3, 7)
	if len(a) != 3 || !slices.Equal(a, b) {
		t.Fatalf("Sample(8, 3, seed 7) = %v then %v: want the same 3", a, b)
	}
	if !slices.IsSortedFunc(a, func(x, y *pipeline.Node) int { return strings.Compare(x.Name, y.Name) }) {
		t.Errorf("sample %v not in graph order", a)
	}
	if got := Sample(all, 0, 7); len(got) != 8 {
		t.Errorf("k = 0 sampled %d of 8, want all", len(got))
	}
	differs := false
	for seed := int64(0); seed < 10 && !differs; seed++ {
		differs = !slices.Equal(Sample(all, 3, seed), a)
	}
	if !differs {
		t.Error("every seed picks the same sample")
	}
}

func TestRunCountsVerdicts(t *testing.T) {
	verdict := map[string]Cell{
		"a": {Verdict: Pass, Bitwise: true},
		"b": {Verdict: Fail, Cross: CrossFail},
		"c": {Verdict: Pass, Cross: CrossPass},
	}
	var seen []string
	r, err := Run(nodes(3), 0, 0, func(i, of int, n *pipeline.Node) {
		if of != 3 || n.Name != string(rune('a'+i)) {
			t.Errorf("progress(%d, %d, %s)", i, of, n.Name)
		}
	}, func(n *pipeline.Node) (Cell, error) {
		seen = append(seen, n.Name)
		c := verdict[n.Name]
		c.Cell = n.Name
		return c, nil
	})
	if err != nil || !slices.Equal(seen, []string{"a", "b", "c"}) {
		t.Fatalf("Run checked %v (%v)", seen, err)
	}
	if r.Kept != 3 || len(r.Cells) != 3 || r.Counts[Pass] != 2 || r.Counts[Fail] != 1 || r.Bitwise != 1 || r.Crossed != 2 || r.CrossPassed != 1 || r.Passed() {
		t.Errorf("report %+v", r)
	}
	boom := errors.New("boom")
	if _, err := Run(nodes(2), 0, 0, func(int, int, *pipeline.Node) {}, func(*pipeline.Node) (Cell, error) { return Cell{}, boom }); err != boom {
		t.Errorf("Run kept going past an error: %v", err)
	}
}

func TestMarkdownDetails(t *testing.T) {
	md := Markdown([]Cell{
		{Cell: "train a|b", Rounds: 2, Verdict: Fail, Round: 2, Recorded: "r", Recomputed: "x"},
		{Cell: "train c", Rounds: 1, Verdict: Pass, Backend: "xla-cuda", Cross: CrossPass,
			CrossDiff: &train.SketchDiff{Worst: 3e-6, WorstTensor: "w0", Tensors: 4}},
	}, 1e-4)
	for _, want := range []string{
		"| train a\\|b | 2 | fail | round 2: recorded r, recomputed x |",
		"| train c (made on xla-cuda) | 1 | pass | cross-backend check: pass (round 1 on ",
		"largest relative difference 3e-06, w0, of 4 tensors; tolerance 0.0001) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}
