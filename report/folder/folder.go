package folder

import (
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/report/latex"
	"github.com/fedpipe/fedpipe/report/site"
	"github.com/fedpipe/fedpipe/results/export"
)

// IncompleteMarker is the file a report's folder holds while Write writes it, saying so in
// incompleteText.
const IncompleteMarker = "INCOMPLETE"

const incompleteText = "fedpipe report is writing this folder, or was stopped before it finished: its files may be\nmissing or from an earlier report. Run the same fedpipe report command again.\n"

// Write writes s, built from graphs' results in store, into out, each file whole or not at
// all; withLatex adds tables/results.tex, tables/<name>.tex for each report table that asks
// for LaTeX (summary.Table.LaTeX) and, with PDF figures, figures/figures.tex. It returns
// how many files it wrote.
func Write(out string, s *site.Site, graphs []*pipeline.Graph, store *artifacts.Store, withLatex bool) (int, error) {
	// Until the last file is written the folder holds IncompleteMarker, so that a report
	// killed midway is not taken for a whole one.
	export.RemoveStaleTemps(out)
	if err := export.WriteFile(filepath.Join(out, IncompleteMarker), []byte(incompleteText)); err != nil {
		return 0, err
	}
	files := 0
	write := func(path string, b []byte) error {
		files++
		return export.WriteFile(filepath.Join(out, path), b)
	}
	if err := write("index.html", []byte(s.HTML)); err != nil {
		return files, err
	}
	if err := write("report.md", []byte(s.Markdown)); err != nil {
		return files, err
	}
	formats := []string{"parquet", "csv"}
	for _, fig := range s.Figures {
		// Each file is written (like every file here) whole or not at all.
		for _, fm := range s.Formats {
			b, err := fig.Render(fm)
			if err == nil {
				err = write(filepath.Join("figures", fig.Name+"."+fm), b)
			}
			if err != nil {
				return files, err
			}
		}
		k, err := export.WriteTable(filepath.Join(out, "tables", fig.Name), fig.Data, nil, formats)
		files += k
		if err != nil {
			return files, err
		}
	}
	if withLatex && slices.Contains(s.Formats, "pdf") && len(s.Figures) > 0 {
		if err := write(filepath.Join("figures", "figures.tex"), []byte(latex.Figures(s.Figures))); err != nil {
			return files, err
		}
	}
	for _, t := range s.Built {
		if withLatex && t.LaTeX && len(t.Grids) > 0 {
			if err := write(filepath.Join("tables", t.Name+".tex"), []byte(latex.Grids(s.Title, t))); err != nil {
				return files, err
			}
		}
	}
	for _, t := range s.Tables {
		if withLatex && t.Name == "results" {
			tex, err := latex.Results(t.Table, s.Title)
			if err == nil {
				err = write(filepath.Join("tables", "results.tex"), []byte(tex))
			}
			if err != nil {
				return files, err
			}
		}
		k, err := export.WriteTable(filepath.Join(out, "tables", t.Name), t.Table, nil, formats)
		files += k
		if err != nil {
			return files, err
		}
	}
	// The stages' own tables (per-round metrics, selections, mask IoU, shift summaries...),
	// as `fedpipe export` writes them.
	// With several manifests, one folder each, named like a stage's (export.FolderNames).
	var manifests []string
	for _, g := range graphs {
		manifests = append(manifests, g.Manifest.Name)
	}
	mfolders := export.FolderNames(manifests)
	for _, g := range graphs {
		dir := filepath.Join(out, "data")
		if len(graphs) > 1 {
			dir = filepath.Join(dir, mfolders[g.Manifest.Name])
		}
		k, _, err := export.ManifestTables(g, store, dir, formats, io.Discard)
		files += k
		if err != nil {
			return files, err
		}
	}
	return files, os.Remove(filepath.Join(out, IncompleteMarker))
}
