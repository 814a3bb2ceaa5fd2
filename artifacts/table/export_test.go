package table

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func exportSample() *Table {
	return &Table{Meta: map[string]string{"run": "fedavg seed=0"}, Columns: []Column{
		Int64Col("round", []int64{1, 2}),
		StringCol("split", []string{"test", "a,b"}),
		Float64Col("accuracy", []float64{0.5, 0.125}),
	}}
}

func TestEncodeParquetReadsBack(t *testing.T) {
	b, err := EncodeParquet(exportSample())
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != 2 || tbl.NumCols() != 3 || tbl.Schema().Field(2).Name != "accuracy" {
		t.Fatalf("read back %d rows, schema %v", tbl.NumRows(), tbl.Schema())
	}
	acc := tbl.Column(2).Data().Chunk(0).(*array.Float64)
	if acc.Value(1) != 0.125 {
		t.Errorf("accuracy[1] = %v", acc.Value(1))
	}
}

func TestEncodeCSV(t *testing.T) {
	b, err := EncodeCSV(exportSample())
	if err != nil {
		t.Fatal(err)
	}
	want := "round,split,accuracy\n1,test,0.5\n2,\"a,b\",0.125\n"
	if string(b) != want {
		t.Errorf("csv:\n%s\nwant:\n%s", b, want)
	}
	if _, err := EncodeCSV(&Table{Columns: []Column{{Name: "x"}}}); err == nil || !strings.Contains(err.Error(), "x") {
		t.Errorf("invalid table: %v", err)
	}
}

// NaN (missing, undefined) is written as an empty CSV field, not "NaN" (issue 18).
func TestEncodeCSVWritesNaNEmpty(t *testing.T) {
	b, err := EncodeCSV(&Table{Columns: []Column{Int64Col("client", []int64{0, 1}), Float64Col("iou", []float64{math.NaN(), 0.25})}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "client,iou\n0,\n1,0.25\n"; string(b) != want {
		t.Errorf("csv %q, want %q", b, want)
	}
}
