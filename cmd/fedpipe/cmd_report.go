package main

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/report/chart"
	"github.com/fedpipe/fedpipe/report/folder"
	"github.com/fedpipe/fedpipe/report/site"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stats"
)

// cmdReport writes a manifest's cached results as an HTML page, a markdown file, each
// figure as SVG, PNG and/or PDF (--format) and the figures' and tables' numbers as Parquet
// and CSV.
var cmdReport = &command{
	name:      "report",
	overview:  []string{"report MANIFEST... -o DIR the cached results as an HTML page, markdown, SVG/PNG/PDF figures"},
	usageLine: "fedpipe report MANIFEST... --out DIR [flags]",
	long:      "Lays the manifests' cached results out like the papers' tables and figures (several\nmanifests, e.g. the columns of one paper table, side by side), and writes\n  DIR/index.html      one self-contained page (inline CSS and SVG, no scripts)\n  DIR/report.md       the same tables, with the figures linked\n  DIR/figures/*.{svg,png,pdf}  each figure on its own, in the --format asked for (SVG and\n                      PNG, twice the SVG's size, for slides, by default; PDF for LaTeX;\n                      with --latex, figures.tex includes the PDFs)\n  DIR/tables/*.{parquet,csv}  the numbers behind every table and figure\n  DIR/data/[<manifest>/]<stage>/*.{parquet,csv}  every cached table of the stages, as fedpipe export\n                      writes them (train_fedavg_lr-0.1_seed-0/metrics.parquet)\nIt runs nothing: cells not computed are shown as such (run the manifest first).",
	groups:    manifestGroups,
	flags:     withFlags(reportCmd),
}

// reportFlags are report's flags.
type reportFlags struct {
	commonFlags
	out, compareOver string
	latex            bool
	formats          []string
}

func (f *reportFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.commonFlags.declare(fs, g)
	fs.StringVarP(&f.out, "out", "o", "", "directory to write into (required)")
	fs.BoolVar(&f.latex, "latex", false, "also write DIR/tables/results.tex, the results as a booktabs LaTeX table, and with --format pdf, DIR/figures/figures.tex (a LaTeX figure per PDF)")
	fs.StringVar(&f.compareOver, "compare-over", string(stats.Seeds), "what the results table's significance marks pair methods over: seeds (exact sign-flip test on the metric, paired by seed) or clients (Wilcoxon signed-rank on per-client final accuracy); see docs/statistics.md")
	fs.StringSliceVar(&f.formats, "format", slices.Clone(site.DefaultFormats), "figure files to write: svg, png (twice the SVG's size, for slides), pdf (for LaTeX)")
}

// reportCmd is `fedpipe report MANIFEST... --out DIR`.
func reportCmd(c *call, f *reportFlags, args []string) error {
	stdout, stderr := c.stdout, c.stderr
	if len(args) == 0 || f.out == "" {
		return failf(exitInvalid, "fedpipe report: expected MANIFEST... and --out DIR")
	}
	for _, fm := range f.formats {
		if !slices.Contains(chart.Formats, fm) {
			return failf(exitInvalid, "fedpipe report: --format %q: want svg, png or pdf", fm)
		}
	}
	if f.compareOver != string(stats.Seeds) && f.compareOver != string(stats.Clients) {
		return failf(exitInvalid, "fedpipe report: --compare-over %q: want seeds or clients", f.compareOver)
	}
	fail := func(err error) error { return failure("fedpipe report", err) }
	loader := &data.Loader{DataDir: f.data}
	graphs := make([]*pipeline.Graph, len(args))
	for i, path := range args {
		g, _, err := loadGraphSet(path, f.set, loader, f.backend)
		if err != nil {
			return fail(err)
		}
		graphs[i] = g
	}
	store, err := f.reader(args[0], stderr) // never creates one, never waits for a run
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	s, err := site.BuildWith(site.Options{Formats: f.formats, CompareOver: stats.Unit(f.compareOver)}, store, graphs...)
	if err != nil {
		return fail(err)
	}
	files, err := folder.Write(f.out, s, graphs, store, f.latex)
	if err != nil {
		return fail(err)
	}
	if !f.json {
		for _, n := range s.Notes {
			fmt.Fprintf(stderr, "fedpipe report: note: %s\n", n)
		}
	}
	if f.json {
		names := make([]string, len(s.Figures))
		for i, fig := range s.Figures {
			names[i] = fig.Name
		}
		return writeJSON(stdout, map[string]any{"manifests": args, "out": f.out, "html": filepath.Join(f.out, "index.html"),
			"runs": s.Runs, "computed": s.Computed, "figures": names, "files": files, "notes": s.Notes,
			"provenance": s.Provenance})
	}
	fmt.Fprintf(stdout, "wrote %s (%d of %d runs computed, %d figures, %d files in %s)\n",
		filepath.Join(f.out, "index.html"), s.Computed, s.Runs, len(s.Figures), files, f.out)
	return nil
}
