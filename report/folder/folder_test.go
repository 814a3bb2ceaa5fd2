package folder

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/report/site"
)

// A written report has its page, markdown and tables (Parquet and CSV), counts them, and
// no longer holds the marker.
func TestWrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	s := &site.Site{HTML: "<p>page</p>", Markdown: "# page\n",
		Tables: []site.NamedTable{{Name: "runs", Table: &table.Table{Columns: []table.Column{table.Float64Col("x", []float64{1})}}}}}
	files, err := Write(out, s, nil, nil, true)
	if err != nil || files != 4 {
		t.Fatalf("Write = %d, %v; want 4 files", files, err)
	}
	for _, f := range []string{"index.html", "report.md", "tables/runs.parquet", "tables/runs.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, IncompleteMarker)); !os.IsNotExist(err) {
		t.Errorf("the marker stayed (%v)", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "index.html")); err != nil || string(b) != s.HTML {
		t.Errorf("index.html = %q, %v", b, err)
	}
}
