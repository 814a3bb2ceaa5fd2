package table

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// EncodeParquet returns t as a Parquet file (zstd-compressed, one row group), with Meta
// kept as Arrow schema metadata, for pandas, polars and DuckDB.
func EncodeParquet(t *Table) ([]byte, error) {
	schema, rec, mem, err := record(t)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithAllocator(mem))
	if err := pqarrow.WriteTable(tbl, &buf, max(int64(t.NumRows()), 1), props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())); err != nil {
		return nil, fmt.Errorf("table: parquet: %w", err)
	}
	return buf.Bytes(), nil
}

// EncodeCSV returns t as CSV with a header row; floats in their shortest exact form.
func EncodeCSV(t *Table) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	row := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		row[i] = c.Name
	}
	w.Write(row)
	for r := 0; r < t.NumRows(); r++ {
		for i := range t.Columns {
			c := &t.Columns[i]
			k, _ := c.kind()
			switch {
			case c.Null(r):
				row[i] = "" // read as null, as NaN is
			case k == KindInt64:
				row[i] = strconv.FormatInt(c.Int64[r], 10)
			case k == KindFloat64:
				// NaN is a missing or undefined value (a cell not computed, the IoU of two
				// empty masks): an empty field, which pandas, polars and DuckDB read as null.
				row[i] = ""
				if v := c.Float64[r]; !math.IsNaN(v) {
					row[i] = strconv.FormatFloat(v, 'g', -1, 64)
				}
			case k == KindBool:
				row[i] = strconv.FormatBool(c.Bool[r])
			default:
				row[i] = c.String[r]
			}
		}
		w.Write(row)
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}
