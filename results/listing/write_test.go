package listing

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/stats"
)

func TestWriters(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	rows := []Row{
		{Manifest: "a.yaml", Label: "fedavg lr=0.1 seed=0", Method: "fedavg", Params: map[string]string{"train.lr": "0.1"}, State: Cached,
			FinalMean: v(90), FinalPooled: v(91), BestMean: v(92), BestPooled: v(93),
			Intervals: Intervals{Pooled: &stats.Interval{Lo: 89.5, Hi: 92.25}},
			Evals:     []Eval{{Round: 2, Pooled: 50, Mean: 49}}},
		{Manifest: "a.yaml", Label: "fedavg lr=0.2 seed=0", Method: "fedavg", Params: map[string]string{"train.lr": "0.2"}, State: Missing},
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "label,method,seed,train.lr,state,final_client_mean_pct,") ||
		!strings.HasSuffix(lines[0], strings.Join(IntervalHeader, ",")) || !strings.HasSuffix(lines[1], ",89.50,92.25,,") {
		t.Errorf("CSV:\n%s", b.String())
	}
	b.Reset()
	WriteTable(&b, rows, false)
	if out := b.String(); !strings.Contains(out, " lr ") || !strings.Contains(out, "[89.50, 92.25]") ||
		!strings.HasSuffix(out, "2 runs: 1 cached, 0 stale, 1 missing\n") {
		t.Errorf("table:\n%s", out)
	}
	b.Reset()
	WriteEvalsTable(&b, rows)
	if out := b.String(); !strings.Contains(out, "50.00") || !strings.HasSuffix(out, "1 evaluations of 1 cached runs (2 runs listed)\n") {
		t.Errorf("evaluations table:\n%s", out)
	}
	b.Reset()
	if err := WriteEvalsCSV(&b, rows); err != nil || b.String() != "label,round,pooled_pct,pooled_ft_pct,client_mean_pct,client_mean_ft_pct\nfedavg lr=0.1 seed=0,2,50,,49,\n" {
		t.Errorf("evaluations CSV (%v):\n%s", err, b.String())
	}
	if got := FormatInterval(stats.Interval{Lo: 1, Hi: 2.345}); got != "[1.00, 2.35]" && got != "[1.00, 2.34]" {
		t.Errorf("FormatInterval = %q", got)
	}
}
