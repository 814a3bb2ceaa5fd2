package results

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/table"
)

type inner struct {
	B float32 `arrow:"b"`
}

type row struct {
	A    int8   `arrow:"a"`
	Skip []byte `arrow:"-"`
	inner
	C string `arrow:"c,optional"`
}

func TestSchema(t *testing.T) {
	fields, err := Schema[row]()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fields {
		got = append(got, f.Name+":"+f.Kind.String()+map[bool]string{true: "?"}[f.Optional])
	}
	if want := []string{"a:int64", "b:float64", "c:string?"}; !reflect.DeepEqual(got, want) {
		t.Errorf("schema %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"untagged", schemaErr[struct{ X int }]()},
		{"unsupported", schemaErr[struct {
			X uint `arrow:"x"`
		}]()},
		{"duplicate", schemaErr[struct {
			X int `arrow:"x"`
			Y int `arrow:"x"`
		}]()},
		{"option", schemaErr[struct {
			X int `arrow:"x,sometimes"`
		}]()},
		{"unnamed", schemaErr[struct {
			X int `arrow:",optional"`
		}]()},
		{"not a struct", schemaErr[int]()},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func schemaErr[T any]() error {
	_, err := Schema[T]()
	return err
}

// Decoding matches columns by name: their order does not matter, columns the row type
// does not name are ignored, and a missing optional column reads as zero.
func TestFromTableMatchesByName(t *testing.T) {
	tb := &table.Table{Columns: []table.Column{
		table.StringCol("extra", []string{"x", "y"}),
		table.Float64Col("b", []float64{0.5, 2}),
		table.Int64Col("a", []int64{-3, 7}),
	}}
	rows, err := FromTable[row](tb)
	if err != nil {
		t.Fatal(err)
	}
	want := []row{{A: -3, inner: inner{B: 0.5}}, {A: 7, inner: inner{B: 2}}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %+v, want %+v", rows, want)
	}
}

func TestFromTableErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cols []table.Column
		want string
	}{
		{"missing", []table.Column{table.Float64Col("b", []float64{1})}, `no column "a"`},
		{"kind", []table.Column{table.Float64Col("a", []float64{1}), table.Float64Col("b", []float64{1})}, `column "a" is float64, want int64`},
		{"overflow", []table.Column{table.Int64Col("a", []int64{300}), table.Float64Col("b", []float64{1})}, "overflows int8"},
	} {
		_, err := FromTable[row](&table.Table{Columns: tc.cols})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, _, err := Decode[row]([]byte("not arrow")); err == nil {
		t.Error("garbage decoded")
	}
}

func TestOmit(t *testing.T) {
	tb, err := ToTable([]row{{A: 1}}, nil, "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Columns) != 2 || tb.Col("c") != nil {
		t.Errorf("columns %+v, want a and b", tb.Columns)
	}
	if _, err := ToTable([]row{{A: 1}}, nil, "a"); err == nil {
		t.Error("omitting a required column worked")
	}
	if _, err := ToTable([]row{{A: 1}}, nil, "nope"); err == nil {
		t.Error("omitting an unknown column worked")
	}
}
