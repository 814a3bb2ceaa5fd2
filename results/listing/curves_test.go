package listing

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
)

// TestEvalsBesideLog: ls --evals sets the manifest's logged figures beside a run's
// evaluations at the same rounds and prints them with kept − logged; a run of a method
// without a log, and a round the log lacks, get none.
func TestEvalsBesideLog(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	g := &pipeline.Graph{Manifest: &manifest.Manifest{Logs: []manifest.LoggedRun{{Method: "fedobp", Source: "s", Evals: []manifest.LoggedEval{
		{Round: 100, Before: 91.37, After: v(91.98), Line: 542}, {Round: 200, Before: 92.07, Line: 550}}}}}}
	obp := []Eval{{Round: 100, Pooled: 90.85, PooledFT: v(91.85)}, {Round: 200, Pooled: 92.57}, {Round: 300, Pooled: 92}}
	avg := []Eval{{Round: 100, Pooled: 80}}
	withLogged(obp, g, "fedobp")
	withLogged(avg, g, "fedavg")
	if obp[0].Logged == nil || *obp[0].Logged != 91.37 || obp[0].LoggedFT == nil || *obp[0].LoggedFT != 91.98 ||
		obp[1].Logged == nil || obp[1].LoggedFT != nil || obp[2].Logged != nil || avg[0].Logged != nil {
		t.Fatalf("logged figures set: %+v %+v", obp, avg)
	}
	rows := []Row{{Label: "fedobp seed=0", State: Cached, Evals: obp}, {Label: "fedavg seed=0", State: Cached, Evals: avg}}
	var b bytes.Buffer
	WriteEvalsTable(&b, rows)
	out := b.String()
	for _, want := range []string{"logged pooled %", "91.37", "-0.52", "91.98", "-0.13", "+0.50"} {
		if !strings.Contains(out, want) {
			t.Errorf("evaluations table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := WriteEvalsCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasSuffix(lines[0], ",logged_pooled_pct,diff_pct,logged_pooled_ft_pct,diff_ft_pct") ||
		!strings.HasPrefix(lines[1], "fedobp seed=0,100,90.85,91.85,0,,91.37,-0.5") || !strings.HasSuffix(lines[4], ",,,,") {
		t.Errorf("evaluations CSV:\n%s", b.String())
	}
}

// TestMethodLabel: a row of a stage shared by two labels reads the log of its own label.
func TestMethodLabel(t *testing.T) {
	n := &pipeline.Node{Run: &manifest.Run{MethodName: "fedobp"}, Also: []*manifest.Run{{MethodName: "fedobp-globalnorm"}}}
	if got := methodLabel(n, "fedobp-globalnorm seed=0"); got != "fedobp-globalnorm" {
		t.Errorf("shared label: %q", got)
	}
	if got := methodLabel(n, "fedobp seed=0"); got != "fedobp" {
		t.Errorf("own label: %q", got)
	}
}
