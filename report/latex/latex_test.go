package latex

import (
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/report/site"
)

// results is a report results table: two methods over two cells, FedAvg's second cell not
// computed (no seeds), Local with one seed and its test-set interval.
func results(withSig bool) *table.Table {
	t := &table.Table{Meta: map[string]string{"metric": "final_client_mean"}, Columns: []table.Column{
		table.StringCol("method", []string{"fedavg", "fedavg", "local", "local"}),
		table.StringCol("cell", []string{"α=0.1", "α=0.5", "α=0.1", "α=0.5"}),
		table.Int64Col("seeds", []int64{3, 0, 3, 1}),
		table.Float64Col("mean_pct", []float64{80.125, 0, 85.5, 70}),
		table.Float64Col("std_pct", []float64{1.5, 0, 0.25, 0}),
	}}
	if withSig {
		t.Meta["compare_over"] = "seeds"
		t.Columns = append(t.Columns,
			table.StringCol("vs_best", []string{"not significantly different", "", "best", "best"}),
			table.Float64Col("ci95_lo_pct", []float64{0, 0, 0, 65.5}),
			table.Float64Col("ci95_hi_pct", []float64{0, 0, 0, 74.25}),
			table.StringCol("ci95_over", []string{"seeds", "", "seeds", "test set"}))
	}
	return t
}

func TestResultsBoldsTheBestAndMarksWhatIsMissing(t *testing.T) {
	got, err := Results(results(false), "Table 1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"% fedpipe report: Table 1\n",
		"\\begin{tabular}{lcc}",
		"Method & $\\alpha$=0.1 & $\\alpha$=0.5 \\\\",
		"fedavg & 80.12 $\\pm$ 1.50 (3) & -- \\\\",
		"local & \\textbf{85.50} $\\pm$ 0.25 (3) & \\textbf{70.00} (1) \\\\",
		"\\caption{Final test accuracy, mean over clients (\\%): mean",
		"\\label{tab:Table-1}\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Results lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "dagger") || strings.Contains(got, "circ") || strings.Contains(got, "cdot") {
		t.Errorf("a table without significance columns or intervals explains marks:\n%s", got)
	}
}

func TestResultsMarksTiesAndOneSeedIntervals(t *testing.T) {
	got, err := Results(results(true), "T")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"fedavg & 80.12 $\\pm$ 1.50 (3)$^\\dagger$ & --",
		"\\textbf{70.00} (1) [65.50, 74.25]",
		"exact sign-flip permutation test paired by seed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Results lacks %q:\n%s", want, got)
		}
	}
}

func TestResultsRefusesATableWithoutItsColumns(t *testing.T) {
	if _, err := Results(&table.Table{Columns: []table.Column{table.StringCol("method", []string{"a"})}}, "T"); err == nil {
		t.Error("a table without cell, seeds, mean and std: no error")
	}
}

func TestFiguresIncludeEachPDFWithItsCaption(t *testing.T) {
	got := Figures([]site.Figure{{Name: "curves", Caption: "Accuracy & loss, 50% clients"}})
	for _, want := range []string{"\\includegraphics[width=\\linewidth]{figures/curves.pdf}",
		"\\caption{Accuracy \\& loss, 50\\% clients}", "\\label{fig:curves}"} {
		if !strings.Contains(got, want) {
			t.Errorf("Figures lacks %q:\n%s", want, got)
		}
	}
}

// The caption names no manifest and explains only the marks the cells carry; a cell no
// test could judge gets its own mark, apart from a cell a test found worse; the table has
// its label and ends with a newline.
func TestResultsCaptionExplainsOnlyMarksUsed(t *testing.T) {
	tab := results(true)
	got, err := Results(tab, "quickstart")
	if err != nil {
		t.Fatal(err)
	}
	caption := got[strings.Index(got, "\\caption{"):strings.Index(got, "\\label")]
	for _, want := range []string{"$^\\dagger$: not significantly different", "[$\\cdot$]: one seed"} {
		if !strings.Contains(caption, want) {
			t.Errorf("caption lacks %q:\n%s", want, caption)
		}
	}
	if strings.Contains(caption, "quickstart") || strings.Contains(caption, "circ") || strings.Contains(caption, "Neither") {
		t.Errorf("caption names the manifest or explains an unused mark:\n%s", caption)
	}
	if !strings.HasSuffix(got, "\\end{table}\n") || !strings.Contains(got, "\\label{tab:quickstart}\n") {
		t.Errorf("no label or no final newline:\n%q", got)
	}
	// Local's cells untestable, FedAvg's significantly worse: two different looks.
	tab.Col("vs_best").String = []string{"significantly worse", "", "untestable with these seeds", "best"}
	tab.Col("seeds").Int64 = []int64{3, 0, 3, 3}
	got, _ = Results(tab, "q")
	for _, want := range []string{"fedavg & 80.12 $\\pm$ 1.50 (3) & --", "\\textbf{85.50} $\\pm$ 0.25 (3)$^\\circ$",
		"$^\\circ$: no test possible", "Neither bold nor marked: significantly worse"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "dagger") || strings.Contains(got, "cdot") {
		t.Errorf("explains a dagger or interval no cell has:\n%s", got)
	}
}
