package summary

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/results"
)

// Table is one of the report's tables, laid out from the runs' entries. Every reader loops
// over Tables: the report stage writes each table's grids into report.md and its data
// table as an output of its own name (which `fedpipe export` then writes as report/<Name>);
// `fedpipe report` puts each in a section of the page and its markdown, its data table
// under tables/<Name>, and with --latex, where LaTeX is set, tables/<Name>.tex. Adding a
// table is one Build function and one entry in Tables (docs/layout.md).
type Table struct {
	// Name names the table's data table and files: the report stage's output, the page's
	// tables/<Name>.parquet and .csv, tables/<Name>.tex. The page's own tables ("results",
	// "pairwise") and its figures' data share tables/, so the name must differ from theirs.
	Name string
	// Title and Intro head the table's section of the page.
	Title, Intro string
	// PageOrder orders the tables' sections on the page (ascending; 0: after those that set
	// it, in list order), report.md keeping the list's order. The page showed the shift
	// table before the cost table, report.md the other way round, before the tables were
	// one list; both keep their bytes.
	PageOrder int
	// LaTeX says whether `fedpipe report --latex` writes the table as tables/<Name>.tex. The
	// tables that predate the list have none, so that a report's files stay as they were.
	LaTeX bool
	// Build lays the entries out (of every run in the report, evaluated or not, in the
	// manifest's order); no grids: the table has nothing to show, and no section.
	Build func(entries []Entry) Layout
}

// Layout is a table laid out: its grids, and the rows of its data table (nil: none).
type Layout struct {
	Grids []Grid
	Data  *table.Table
}

// Built is a table of Tables with its layout.
type Built struct {
	Table
	Layout
}

// Tables are the report's tables, in report.md's order: the runs, their cost beside
// FedAvg's, accuracy under test-time shift.
var Tables = []Table{
	{Name: results.OutReportRuns, Title: "Runs", PageOrder: 1, Build: runsTable,
		Intro: "Every computed configuration, seeds folded (each figure a mean over seeds): final accuracy as the client mean ± std over clients, and pooled over all test samples ± std over seeds where there are several, and the best pooled accuracy at the evaluation rounds."},
	{Name: "cost", Title: "Communication and computation", PageOrder: 3, Build: costTable,
		Intro: "Per client over the whole run, averaged over clients and seeds: megabytes received and sent, and training FLOPs (DM-PFL Table 4)."},
	{Name: "shift", Title: "Accuracy under test-time shift", PageOrder: 2, Build: shiftTable,
		Intro: "Mean ± std over clients, averaged over seeds (DM-PFL Table 1 and Fig. 4)."},
}

// Build lays out every table of Tables from entries, in list order.
func Build(entries []Entry) []Built {
	out := make([]Built, len(Tables))
	for i, t := range Tables {
		out[i] = Built{Table: t, Layout: t.Build(entries)}
	}
	return out
}

// PageOrdered returns built in the page's order (Table.PageOrder).
func PageOrdered(built []Built) []Built {
	out := slices.Clone(built)
	rank := func(b Built) int {
		if b.PageOrder == 0 {
			return int(^uint(0) >> 1)
		}
		return b.PageOrder
	}
	slices.SortStableFunc(out, func(a, b Built) int { return cmp.Compare(rank(a), rank(b)) })
	return out
}

// Markdown is the report stage's report.md: the manifest's name as its heading, its
// description, then every grid of built in order.
func Markdown(title, description string, built []Built) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", title)
	if description != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(description))
	}
	for _, t := range built {
		for _, g := range t.Grids {
			b.WriteString(g.Markdown())
		}
	}
	return b.String()
}

// runsHead and runsPageHead head the runs table in report.md and on the page (whose intro
// says what is averaged).
var (
	runsHead = []string{"method", "seeds", "clients", "final accuracy, client mean ± std over clients (%; both averaged over seeds)",
		"final accuracy, pooled over test samples (%; mean ± std over seeds where several)",
		"best pooled accuracy during training (%; mean over seeds) @ round of each seed",
		"after fine-tuning: final / best pooled (%; mean over seeds)"}
	runsPageHead = []string{"configuration", "seeds", "clients", "final, client mean ± std over clients", "final, pooled (± std over seeds)",
		"best pooled @ round of each seed", "after fine-tuning: final / best pooled"}
)

// runsTable has one row per evaluated configuration (seeds folded together, see Rows):
// final accuracy as the mean ± std over clients and pooled over all test samples, and the
// best pooled accuracy seen at the evaluation rounds during training with its round, before
// fine-tuning; then, for runs that fine-tune, the final and best pooled accuracy after. Its
// data table has a row per run (Runs).
func runsTable(entries []Entry) Layout {
	var done []Entry
	for _, e := range entries {
		if e.Evaluated {
			done = append(done, e)
		}
	}
	if len(done) == 0 {
		return Layout{}
	}
	g := Grid{Head: runsHead, PageHead: runsPageHead}
	for _, r := range Rows(done) {
		g.Rows = append(g.Rows, r.Cells())
	}
	return Layout{Grids: []Grid{g}, Data: DataTable(Runs(done), nil)}
}

// costTable is CostGrid.
func costTable(entries []Entry) Layout {
	g, ok := CostGrid(entries)
	if !ok {
		return Layout{}
	}
	return Layout{Grids: []Grid{g}}
}

// shiftTable is ShiftGrids.
func shiftTable(entries []Entry) Layout { return Layout{Grids: ShiftGrids(entries)} }

// DataTable lays rows of a results row type out as a table (results.ToTable). Their
// schemas are fixed and checked by package results' tests, so an error here is a bug.
func DataTable[T any](rows []T, meta map[string]string) *table.Table {
	t, err := results.ToTable(rows, meta)
	if err != nil {
		panic(err)
	}
	return t
}
