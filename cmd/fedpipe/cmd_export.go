package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/data"
)

// export writes every cached metric table of a manifest as Arrow, Parquet and CSV files.
func exportCmd(c *call) error {
	args, stdout, stderr := c.args, c.stdout, c.stderr
	fs := c.flags()
	var f commonFlags
	f.register(fs, "export")
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
	gs, err := onlyGraphs([]*pipeline.Graph{g}, f.only)
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
	removeStaleTemps(*out)
	files, skipped, err := exportTables(g, store, *out, *formats, stderr)
	if err != nil {
		return fail(err)
	}
	if *models {
		k, err := exportTensors(g, store, *out)
		files += k
		if err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(stdout, "wrote %d files to %s (%d stages not run yet)\n", files, *out, skipped)
	return nil
}

// exportTables writes every cached table of g's stages under out as
// <folder>/<output>.<format>, the stage's folder named by stageFolders
// (train_fedavg_lr-0.1_seed-0), and the report stage's report.md as out/report.md.
// Stages not run yet are listed on skippedLog and counted.
func exportTables(g *pipeline.Graph, store *artifacts.Store, out string, formats []string, skippedLog io.Writer) (files, skipped int, err error) {
	folders := stageFolders(g)
	for _, n := range g.Nodes {
		a, ok, err := store.GetAction(artifacts.Digest(n.Key))
		if err != nil {
			return files, skipped, err
		}
		if !ok {
			fmt.Fprintf(skippedLog, "not run yet, skipped: %s\n", n.Name)
			skipped++
			continue
		}
		// A stage shared by identical method labels is exported under each label.
		var dirs []string
		for _, name := range append([]string{n.Name}, aliasNames(n)...) {
			dirs = append(dirs, filepath.Join(out, folders[name]))
		}
		for name, d := range a.Outputs {
			if results.TensorOutput(name) {
				continue // models and masks stay in the store; no need to read them
			}
			b, err := store.Get(d)
			if err != nil {
				return files, skipped, err
			}
			if name == results.OutReportMarkdown {
				if err := writeFile(filepath.Join(out, results.OutReportMarkdown), b); err != nil {
					return files, skipped, err
				}
				files++
				continue
			}
			if !bytes.HasPrefix(b, []byte("ARROW1")) {
				continue // other tensors
			}
			t, err := table.Decode(b)
			if err != nil {
				return files, skipped, fmt.Errorf("%s output %s: %w", n.Name, name, err)
			}
			for i, dir := range dirs {
				// Each label's copy carries its own run identity.
				tt, bb := t, b
				if i > 0 {
					if tt, err = table.Decode(b); err != nil {
						return files, skipped, err
					}
				}
				view := *n
				if i > 0 {
					view.Run = n.Also[i-1]
				}
				if withIdentity(tt, g, &view) {
					bb = nil // re-encoded with the identity columns
				}
				if added, err := withIntervals(tt, n, name, store); err != nil {
					return files, skipped, err
				} else if added {
					bb = nil // re-encoded with the test-set intervals
				}
				k, err := writeTable(filepath.Join(dir, strings.ReplaceAll(name, "/", "-")), tt, bb, formats)
				files += k
				if err != nil {
					return files, skipped, err
				}
			}
		}
	}
	return files, skipped, nil
}

// writeTable writes t as base.<format> for each format (arrow, parquet, csv) and returns
// how many files it wrote. arrow, when not nil, is t's Arrow encoding, written as is.
func writeTable(base string, t *table.Table, arrow []byte, formats []string) (int, error) {
	files := 0
	for _, fm := range formats {
		var enc []byte
		var err error
		switch fm {
		case "arrow":
			if enc = arrow; enc == nil {
				enc, err = table.Encode(t)
			}
		case "parquet":
			enc, err = table.EncodeParquet(t)
		case "csv":
			enc, err = table.EncodeCSV(t)
		default:
			err = fmt.Errorf("unknown table format %q", fm)
		}
		if err != nil {
			return files, err
		}
		if err := writeFile(base+"."+fm, enc); err != nil {
			return files, err
		}
		files++
	}
	return files, nil
}

// tmpSuffix ends the name of the temporary file writeFile renames over its target.
const tmpSuffix = ".tmp"

// writeFile writes b to path atomically (temp file, then rename), creating directories. A
// write that fails (a full disk) removes its temporary file; one a killed process left is
// removed by the next report or export into the folder (removeStaleTemps).
func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + tmpSuffix
	err := os.WriteFile(tmp, b, 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// removeStaleTemps removes, under the output folder dir (a report's or an export's,
// written by this process alone), the temporary files a killed report or export left
// (NAME.tmp, see writeFile). A folder that does not exist yet has none.
func removeStaleTemps(dir string) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(d.Name(), tmpSuffix) {
			os.Remove(p)
		}
		return nil
	})
}

// aliasNames names a shared stage as each other label it serves ("train y seed=0").
func aliasNames(n *pipeline.Node) []string {
	var out []string
	for _, r := range n.Also {
		out = append(out, n.Kind+" "+r.Label())
	}
	return out
}

// defaultExportDir is where export writes without --out: exports/NAME in the working
// directory, NAME the manifest's name as a folder name (folderNames; docs/outputs.md).
func defaultExportDir(name string) string {
	return filepath.Join("exports", folderNames([]string{name})[name])
}
