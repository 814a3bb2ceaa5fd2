package export

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/table"
)

func TestWriteFileReplacesAndLeavesNoTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b.txt")
	for _, want := range []string{"one", "two"} {
		if err := WriteFile(path, []byte(want)); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Fatalf("read back %q, %v; want %q", got, err, want)
		}
	}
	if _, err := os.Stat(path + TmpSuffix); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}
}

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale, kept := filepath.Join(dir, "x", "t.csv"+TmpSuffix), filepath.Join(dir, "x", "t.csv")
	for _, p := range []string{stale, kept} {
		if err := WriteFile(p, nil); err != nil {
			t.Fatal(err)
		}
	}
	RemoveStaleTemps(dir)
	RemoveStaleTemps(filepath.Join(dir, "absent")) // no folder yet: nothing to do
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file still there: %v", err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("a finished file was removed: %v", err)
	}
}

func TestWriteTableFormats(t *testing.T) {
	tb := &table.Table{Columns: []table.Column{table.Int64Col("round", []int64{1, 2}), table.Float64Col("acc", []float64{0.5, 0.25})}}
	base := filepath.Join(t.TempDir(), "metrics")
	arrow := []byte("ARROW1 as stored")
	n, err := WriteTable(base, tb, arrow, []string{"arrow", "csv", "parquet"})
	if err != nil || n != 3 {
		t.Fatalf("WriteTable wrote %d files: %v", n, err)
	}
	if b, _ := os.ReadFile(base + ".arrow"); !bytes.Equal(b, arrow) {
		t.Errorf("arrow file is not the stored encoding: %q", b)
	}
	if b, _ := os.ReadFile(base + ".csv"); !strings.HasPrefix(string(b), "round,acc\n1,0.5\n") {
		t.Errorf("csv:\n%s", b)
	}
	if _, err := WriteTable(base, tb, nil, []string{"xlsx"}); err == nil {
		t.Error("an unknown format was accepted")
	}
}
