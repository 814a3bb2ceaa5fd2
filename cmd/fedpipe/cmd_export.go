package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results/export"
	"github.com/fedpipe/fedpipe/stages/data"
)

// cmdExport writes every cached metric table of a manifest as Arrow, Parquet and CSV files.
var cmdExport = &command{
	name:      "export",
	overview:  []string{"export MANIFEST -o DIR    write the cached tables as Arrow, Parquet and CSV files"},
	usageLine: "fedpipe export MANIFEST [--out DIR] [flags]",
	long:      "Writes every cached table of MANIFEST's stages (partitions, per-round metrics, selections,\nmask IoU, communication, per-client and summary evaluations, the run table) as\nDIR/<stage>/<output>.<format>, plus DIR/report.md; a stage's folder is its name with \" \" as \"_\"\nand \"=\" as \"-\" (train_fedavg_lr-0.1_seed-0), so that no reader takes it for a hive partition:\nevery table carries its run's identity as columns. Stages not yet run are listed and skipped.",
	groups:    lsGroups,
	flags:     withFlags(exportCmd),
}

// exportFlags are export's flags.
type exportFlags struct {
	commonFlags
	out     string
	formats []string
	models  bool
}

func (f *exportFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.commonFlags.declare(fs, g)
	fs.StringVarP(&f.out, "out", "o", "", "directory to write into (default exports/NAME in the working directory, NAME the manifest's name)")
	fs.StringSliceVar(&f.formats, "format", []string{"arrow", "parquet", "csv"}, "file formats to write: arrow (Feather v2), parquet, csv")
	fs.BoolVar(&f.models, "models", false, "also write the trained models, personal states and masks as safetensors files (masks as 0/1 float32)")
}

// exportCmd is `fedpipe export MANIFEST`.
func exportCmd(c *call, f *exportFlags, args []string) error {
	stdout, stderr := c.stdout, c.stderr
	if len(args) != 1 {
		return failf(exitInvalid, "fedpipe export: expected one MANIFEST argument, got %d", len(args))
	}
	for _, fm := range f.formats {
		if fm != "arrow" && fm != "parquet" && fm != "csv" {
			return failf(exitInvalid, "fedpipe export: --format %q: want arrow, parquet or csv", fm)
		}
	}
	fail := func(err error) error { return failure("fedpipe export", err) }
	g, _, err := loadGraphSet(args[0], f.set, &data.Loader{DataDir: f.data}, f.backend)
	if err != nil {
		return fail(err)
	}
	gs, err := pipeline.OnlyGraphs([]*pipeline.Graph{g}, f.only)
	if err != nil {
		return fail(err)
	}
	g = gs[0]
	if !c.fs.Changed("out") {
		f.out = defaultExportDir(g.Manifest.Name)
	}
	store, err := f.reader(args[0], stderr) // never creates one, never waits for a run
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	export.RemoveStaleTemps(f.out)
	files, skipped, err := export.ManifestTables(g, store, f.out, f.formats, stderr)
	if err != nil {
		return fail(err)
	}
	if f.models {
		k, err := export.Tensors(g, store, f.out)
		files += k
		if err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(stdout, "wrote %d files to %s (%d stages not run yet)\n", files, f.out, skipped)
	return nil
}

// defaultExportDir is where export writes without --out: exports/NAME in the working
// directory, NAME the manifest's name as a folder name (export.FolderNames; docs/outputs.md).
func defaultExportDir(name string) string {
	return filepath.Join("exports", export.FolderNames([]string{name})[name])
}
