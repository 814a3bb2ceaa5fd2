package page

import (
	"regexp"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/screens/watch"
)

// run is a seed of method in manifest m.yaml whose journal has the training losses given
// from round first on, and whose carried points are rounds 1..first-1 at loss carried.
func run(method, display string, seed int64, state string, first int, carried float64, losses ...float64) watch.Run {
	r := watch.Run{Manifest: "m.yaml", Cell: method, Label: method, Seed: seed, Method: method, Display: display, Rounds: first + len(losses) - 1, State: state,
		Journal: &live.Journal{Key: method}}
	for i := 1; i < first; i++ {
		v := carried
		r.Carried = append(r.Carried, live.Point{Round: i, TrainLoss: &v})
	}
	for i, l := range losses {
		v := l
		p := live.Point{Round: first + i, TrainLoss: &v}
		if i == len(losses)-1 {
			p.Eval = &live.Eval{TestAccuracy: v / 10}
		}
		r.Journal.Points = append(r.Journal.Points, p)
	}
	return r
}

// Three seeds of FedAvg, one of which has only its own rounds 3–4 (its rounds 1–2 not
// carried), and one seed of Local: one curve per method, named and coloured apart, with
// the mean and min–max of the seeds that have each round and how many do.
func TestOverlayBandsAndSeedCounts(t *testing.T) {
	runs := []watch.Run{
		run("fedavg", "FedAvg", 0, live.Finished, 3, 1, 2, 4),
		run("fedavg", "FedAvg", 1, live.Finished, 3, 3, 4, 6),
		run("fedavg", "FedAvg", 2, watch.Training, 3, 0, 6),
		run("local", "Local", 0, watch.Training, 1, 0, 5, 5),
	}
	runs[2].Carried = nil
	curves := Curves(runs)
	if len(curves) != 2 || curves[0].Name != "FedAvg" || curves[1].Name != "Local" || curves[0].Seeds != 3 || curves[1].Seeds != 1 {
		t.Fatalf("curves: %+v", curves)
	}
	if curves[0].Color == curves[1].Color {
		t.Fatal("two curves share a colour")
	}
	got := Stats(curves[0], Metrics[0])
	want := []Stat{
		{Round: 1, Mean: 2, Min: 1, Max: 3, N: 2},
		{Round: 2, Mean: 2, Min: 1, Max: 3, N: 2},
		{Round: 3, Mean: 4, Min: 2, Max: 6, N: 3},
		{Round: 4, Mean: 5, Min: 4, Max: 6, N: 2},
	}
	if len(got) != len(want) {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("round %d: %+v, want %+v", want[i].Round, got[i], want[i])
		}
	}
	l := Line{Curve: curves[0], Stats: got}
	if few := FewerSeeds(l); few != "2 of 3 seeds at rounds 1–2, 2 of 3 seeds at round 4" {
		t.Fatalf("FewerSeeds: %q", few)
	}
	if few := FewerSeeds(Line{Curve: curves[1], Stats: Stats(curves[1], Metrics[0])}); few != "" {
		t.Fatalf("a one-seed curve's FewerSeeds: %q", few)
	}

	expect := map[string][]manifest.Expectation{"m.yaml": {
		{Method: "fedavg", Metric: "final_client_mean", Published: 60, Std: 1},
		{Method: "local", Metric: "final_client_mean", Published: 70},
	}}
	charts := Charts(curves, expect)
	var ids []string
	for _, c := range charts {
		ids = append(ids, c.Metric.ID)
	}
	if strings.Join(ids, ",") != "train_loss,test_accuracy,test_loss" {
		t.Fatalf("charts %v: want training loss, test accuracy and test loss (no fine-tuning)", ids)
	}
	// Only FedAvg has a finished seed: only its published number is drawn.
	if refs := charts[1].Refs; len(refs) != 1 || refs[0].Curve != curves[0] || refs[0].Value != 60 || !strings.Contains(refs[0].Label, "60.00 ± 1.00") {
		t.Fatalf("reference lines: %+v", refs)
	}
	if charts[0].Rounds != 4 {
		t.Fatalf("x axis to round %d, want 4", charts[0].Rounds)
	}

	svg := SVG(charts[0])
	for _, s := range []string{`data-name="FedAvg"`, `data-name="Local"`, `data-first-round="1" data-last-round="4"`, "<polygon", "FedAvg, round 4: 5 (mean; min 4, max 6), 2 of 3 seeds", "Local, round 1: 5, 1 of 1 seeds"} {
		if !strings.Contains(svg, s) {
			t.Errorf("the chart lacks %q", s)
		}
	}
	// Hollow points: FedAvg's rounds 1, 2 and 4.
	hollow := regexp.MustCompile(`<circle [^>]*fill="#fff" stroke="` + curves[0].Color + `"`)
	if n := len(hollow.FindAllString(svg, -1)); n != 3 {
		t.Errorf("%d hollow FedAvg points, want 3", n)
	}
	if strings.Contains(svg, "http://") && strings.Count(svg, "http://") != 1 { // the xmlns only
		t.Error("the chart refers to something elsewhere")
	}

	legend := Legend(curves, charts)
	for _, s := range []string{"FedAvg", "Local", "minimum to maximum", "2 of 3 seeds at rounds 1–2", `data-finished="false"`, "continues the cached 2-round run", "Dashed: published numbers."} {
		if !strings.Contains(legend, s) {
			t.Errorf("the legend lacks %q:\n%s", s, legend)
		}
	}
	// Without published numbers drawn, no word of dashed lines.
	for i := range charts {
		charts[i].Refs = nil
	}
	if legend := Legend(curves, charts); strings.Contains(legend, "Dashed") {
		t.Errorf("the legend explains dashed lines none of its charts has:\n%s", legend)
	}
}

// Tick steps are 1, 2 or 5 times a power of ten; the round axis starts at round 1.
func TestTicks(t *testing.T) {
	for raw, want := range map[float64]float64{0.013: 0.02, 0.3: 0.5, 7: 10, 1: 1, 0: 1} {
		if got := niceStep(raw); got != want {
			t.Errorf("niceStep(%g) = %g, want %g", raw, got, want)
		}
	}
	if got := roundTicks(40); got[0] != 1 || got[len(got)-1] != 40 {
		t.Errorf("roundTicks(40) = %v", got)
	}
}

// A curve is named as every table names its cell (manifest.DisplayLabel's rule): the
// method's display name in place of its id, grid values kept, and a cell label of the
// manifest's own choosing as written.
func TestCurveNamesFollowTheTables(t *testing.T) {
	a := run("fedavg", "FedAvg", 0, live.Finished, 1, 0, 1)
	a.Cell = "fedavg lr=0.1"
	b := run("fedavg", "FedAvg", 0, live.Finished, 1, 0, 1)
	b.Cell = "fedavg-ft"
	cs := Curves([]watch.Run{a, b})
	if len(cs) != 2 || cs[0].Name != "FedAvg lr=0.1" || cs[1].Name != "fedavg-ft" {
		t.Errorf("curve names: %q, %q; want FedAvg lr=0.1, fedavg-ft", cs[0].Name, cs[1].Name)
	}
}
