package export

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
)

// Layout says where Tables writes each stage's tables and what it adds to them.
type Layout struct {
	// Folders maps the name of every stage, and every other label a shared stage serves
	// (Aliases), to its folder under the output folder.
	Folders map[string]string
	// Aliases names a shared stage as each other label it serves, in n.Also's order.
	Aliases func(n *pipeline.Node) []string
	// Decorate adds columns to output name of stage n, as view (n with Run set to the
	// label written) exports it: the run's identity, its test-set intervals; it reports
	// whether it changed t.
	Decorate func(t *table.Table, n, view *pipeline.Node, name string) (bool, error)
}

// Tables writes every cached table of g's stages under out as
// <folder>/<output>.<format>, the stage's folder as l.Folders names it
// (train_fedavg_lr-0.1_seed-0), and the report stage's markdown report as
// out/report.md. Stages not run yet are listed on skippedLog and counted.
func Tables(g *pipeline.Graph, store *artifacts.Store, out string, formats []string, skippedLog io.Writer, l Layout) (files, skipped int, err error) {
	folders := l.Folders
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
		for _, name := range append([]string{n.Name}, l.Aliases(n)...) {
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
				if err := WriteFile(filepath.Join(out, results.OutReportMarkdown), b); err != nil {
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
				if changed, err := l.Decorate(tt, n, &view, name); err != nil {
					return files, skipped, err
				} else if changed {
					bb = nil // re-encoded with the added columns
				}
				k, err := WriteTable(filepath.Join(dir, strings.ReplaceAll(name, "/", "-")), tt, bb, formats)
				files += k
				if err != nil {
					return files, skipped, err
				}
			}
		}
	}
	return files, skipped, nil
}

// WriteTable writes t as base.<format> for each format (arrow, parquet, csv) and returns
// how many files it wrote. arrow, when not nil, is t's Arrow encoding, written as is.
func WriteTable(base string, t *table.Table, arrow []byte, formats []string) (int, error) {
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
		if err := WriteFile(base+"."+fm, enc); err != nil {
			return files, err
		}
		files++
	}
	return files, nil
}

// TmpSuffix ends the name of the temporary file writeFile renames over its target.
const TmpSuffix = ".tmp"

// WriteFile writes b to path atomically (temp file, then rename), creating directories. A
// write that fails (a full disk) removes its temporary file; one a killed process left is
// removed by the next report or export into the folder (RemoveStaleTemps).
func WriteFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + TmpSuffix
	err := os.WriteFile(tmp, b, 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// RemoveStaleTemps removes, under the output folder dir (a report's or an export's,
// written by this process alone), the temporary files a killed report or export left
// (NAME.tmp, see WriteFile). A folder that does not exist yet has none.
func RemoveStaleTemps(dir string) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(d.Name(), TmpSuffix) {
			os.Remove(p)
		}
		return nil
	})
}
