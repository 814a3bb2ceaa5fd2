package results

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/table"
)

// checkCodec encodes rows, compares the bytes with ref (the table as the stages built it
// column by column before this package existed), and decodes them back to rows.
func checkCodec[T any](t *testing.T, rows []T, meta map[string]string, ref *table.Table, omit ...string) {
	t.Helper()
	got, err := Encode(rows, meta, omit...)
	if err != nil {
		t.Fatal(err)
	}
	want, err := table.Encode(ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		g, _ := table.Decode(got)
		t.Fatalf("%T: encoding differs from the reference table:\n got %+v\nwant %+v", rows, g, ref)
	}
	back, m, err := Decode[T](got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, rows) {
		t.Errorf("%T: round trip\n got %+v\nwant %+v", rows, back, rows)
	}
	if len(meta) > 0 && !reflect.DeepEqual(m, meta) {
		t.Errorf("%T: metadata %v, want %v", rows, m, meta)
	}
	// An empty table keeps its schema and decodes to no rows.
	empty, err := Encode([]T(nil), nil, omit...)
	if err != nil {
		t.Fatal(err)
	}
	et, err := table.Decode(empty)
	if err != nil {
		t.Fatal(err)
	}
	if len(et.Columns) != len(ref.Columns) {
		t.Errorf("%T: empty table has %d columns, want %d", rows, len(et.Columns), len(ref.Columns))
	}
	if none, _, err := Decode[T](empty); err != nil || len(none) != 0 {
		t.Errorf("%T: empty table decodes to %v, %v", rows, none, err)
	}
}

// ref builds a reference table from columns made by i64, f64 and str.
func ref(meta map[string]string, cols ...table.Column) *table.Table {
	return &table.Table{Meta: meta, Columns: cols}
}

func i64(name string, v ...int64) table.Column   { return table.Int64Col(name, v) }
func f64(name string, v ...float64) table.Column { return table.Float64Col(name, v) }
func str(name string, v ...string) table.Column  { return table.StringCol(name, v) }
