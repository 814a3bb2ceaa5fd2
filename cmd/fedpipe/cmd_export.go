package main

import (
	"fmt"
	"path/filepath"

	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results/export"
	"github.com/fedpipe/fedpipe/stages/data"
)

// export writes every cached metric table of a manifest as Arrow, Parquet and CSV files.
func exportCmd(c *call) error {
	args, stdout, stderr := c.args, c.stdout, c.stderr
	fs := c.flags()
	var f commonFlags
	f.register(fs, c.groups)
	out := fs.StringP("out", "o", "", "directory to write into (default exports/NAME in the working directory, NAME the manifest's name)")
	formats := fs.StringSlice("format", []string{"arrow", "parquet", "csv"}, "file formats to write: arrow (Feather v2), parquet, csv")
	models := fs.Bool("models", false, "also write the trained models, personal states and masks as safetensors files (masks as 0/1 float32)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe export MANIFEST [--out DIR] [flags]\n\nWrites every cached table of MANIFEST's stages (partitions, per-round metrics, selections,\nmask IoU, communication, per-client and summary evaluations, the run table) as\nDIR/<stage>/<output>.<format>, plus DIR/report.md; a stage's folder is its name with \" \" as \"_\"\nand \"=\" as \"-\" (train_fedavg_lr-0.1_seed-0), so that no reader takes it for a hive partition:\nevery table carries its run's identity as columns. Stages not yet run are listed and skipped.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return failf(exitInvalid, "fedpipe export: expected one MANIFEST argument, got %d", fs.NArg())
	}
	for _, fm := range *formats {
		if fm != "arrow" && fm != "parquet" && fm != "csv" {
			return failf(exitInvalid, "fedpipe export: --format %q: want arrow, parquet or csv", fm)
		}
	}
	fail := func(err error) error { return failure("fedpipe export", err) }
	g, _, err := loadGraphSet(fs.Arg(0), f.set, &data.Loader{DataDir: f.data}, f.backend)
	if err != nil {
		return fail(err)
	}
	gs, err := pipeline.OnlyGraphs([]*pipeline.Graph{g}, f.only)
	if err != nil {
		return fail(err)
	}
	g = gs[0]
	if !fs.Changed("out") {
		*out = defaultExportDir(g.Manifest.Name)
	}
	store, err := f.reader(fs.Arg(0), stderr) // never creates one, never waits for a run
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	export.RemoveStaleTemps(*out)
	files, skipped, err := export.ManifestTables(g, store, *out, *formats, stderr)
	if err != nil {
		return fail(err)
	}
	if *models {
		k, err := export.Tensors(g, store, *out)
		files += k
		if err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(stdout, "wrote %d files to %s (%d stages not run yet)\n", files, *out, skipped)
	return nil
}

// defaultExportDir is where export writes without --out: exports/NAME in the working
// directory, NAME the manifest's name as a folder name (export.FolderNames; docs/outputs.md).
func defaultExportDir(name string) string {
	return filepath.Join("exports", export.FolderNames([]string{name})[name])
}
