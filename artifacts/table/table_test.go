package table

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func metrics() *Table {
	return &Table{
		Columns: []Column{
			Int64Col("round", []int64{1, 2, 3}),
			StringCol("client", []string{"c0", "c1", "ünïcode"}),
			Float64Col("acc", []float64{0.5, math.NaN(), math.Inf(-1)}),
			{Name: "loss", Float64: []float64{2.5, 1.25, 0.625}}, // Kind inferred
		},
		Meta: map[string]string{"stage": "train", "method": "fedavg", "a": ""},
	}
}

// equal compares tables, treating NaN as equal to NaN and an unset Kind as
// the kind it infers.
func equal(a, b *Table) bool {
	if len(a.Columns) != len(b.Columns) || !reflect.DeepEqual(a.Meta, b.Meta) {
		return false
	}
	for i := range a.Columns {
		ca, cb := a.Columns[i], b.Columns[i]
		ka, _ := ca.kind()
		kb, _ := cb.kind()
		if ca.Name != cb.Name || ka != kb || ca.Len() != cb.Len() {
			return false
		}
		if !reflect.DeepEqual(ca.Int64, cb.Int64) && ca.Len() > 0 && ka == KindInt64 {
			return false
		}
		if !reflect.DeepEqual(ca.String, cb.String) && ca.Len() > 0 && ka == KindString {
			return false
		}
		for j := range ca.Float64 {
			if math.Float64bits(ca.Float64[j]) != math.Float64bits(cb.Float64[j]) {
				return false
			}
		}
	}
	return true
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    *Table
	}{
		{"metrics", metrics()},
		{"empty", &Table{}},
		{"zero-rows", &Table{Columns: []Column{Int64Col("a", nil), StringCol("b", nil), Float64Col("c", []float64{})}}},
		{"meta-only", &Table{Meta: map[string]string{"k": "v"}}},
		{"empty-strings", &Table{Columns: []Column{StringCol("s", []string{"", "", "x"})}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Encode(tc.t)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !equal(got, tc.t) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.t)
			}
			for _, c := range got.Columns {
				if c.Kind == KindUnset || (c.Int64 == nil && c.Float64 == nil && c.String == nil) {
					t.Fatalf("decoded column %q lacks Kind or slice", c.Name)
				}
			}
			b2, err := Encode(got)
			if err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("re-encoding the decoded table changed the bytes (err %v)", err)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	first, err := Encode(metrics())
	if err != nil {
		t.Fatal(err)
	}
	for range 20 { // map iteration order varies from run to run
		b, err := Encode(metrics())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, first) {
			t.Fatal("Encode is not deterministic")
		}
	}
	if !bytes.HasPrefix(first, []byte("ARROW1")) || !bytes.HasSuffix(first, []byte("ARROW1")) {
		t.Fatal("not an Arrow IPC file")
	}
}

func TestAccessors(t *testing.T) {
	tb := metrics()
	if tb.NumRows() != 3 {
		t.Fatalf("NumRows = %d", tb.NumRows())
	}
	if c := tb.Col("client"); c == nil || c.String[1] != "c1" {
		t.Fatalf("Col(client) = %+v", c)
	}
	if tb.Col("nope") != nil {
		t.Fatal("Col of absent column")
	}
	tb.Col("round").Int64[0] = 99
	if tb.Columns[0].Int64[0] != 99 {
		t.Fatal("Col does not point into the table")
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cols []Column
		want string
	}{
		{"no-name", []Column{Int64Col("", []int64{1})}, "no name"},
		{"duplicate", []Column{Int64Col("a", []int64{1}), Int64Col("a", []int64{2})}, "duplicate"},
		{"ragged", []Column{Int64Col("a", []int64{1}), Int64Col("b", []int64{1, 2})}, "rows"},
		{"two-slices", []Column{{Name: "a", Int64: []int64{1}, Float64: []float64{1}}}, "more than one"},
		{"no-slice", []Column{{Name: "a"}}, "no values"},
		{"kind-mismatch", []Column{{Name: "a", Kind: KindString, Int64: []int64{1}}}, "Kind is string"},
		{"bad-kind", []Column{{Name: "a", Kind: 9, Int64: []int64{1}}}, "unknown kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := &Table{Columns: tc.cols}
			err := tb.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
			if _, err := Encode(tb); err == nil {
				t.Fatal("Encode accepted an invalid table")
			}
		})
	}
	// An explicit Kind makes an all-nil empty column valid.
	if err := (&Table{Columns: []Column{{Name: "a", Kind: KindFloat64}}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeRejects(t *testing.T) {
	valid, _ := Encode(metrics())
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"nil", nil},
		{"text", []byte("round,acc\n1,0.5\n")},
		{"magic-only", []byte("ARROW1\x00\x00ARROW1")},
		{"truncated", valid[:len(valid)/2]},
		{"no-footer-magic", valid[:len(valid)-1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode(tc.in); err == nil {
				t.Fatal("Decode accepted garbage")
			}
		})
	}
	// Flipping any single byte must never panic (it may still decode, e.g.
	// inside a float).
	for i := range valid {
		b := append([]byte(nil), valid...)
		b[i] ^= 0xff
		Decode(b)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics.arrow")
	if err := WriteFile(path, metrics()); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, metrics()); err != nil { // overwrite
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil || !equal(got, metrics()) {
		t.Fatalf("ReadFile: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temporary files left behind: %v", ents)
	}
	if err := WriteFile(filepath.Join(dir, "x"), &Table{Columns: []Column{{Name: ""}}}); err == nil {
		t.Fatal("WriteFile accepted an invalid table")
	}
}

// TestPyArrowReads checks interoperability when python3 with pyarrow is
// installed; it skips otherwise.
func TestPyArrowReads(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "import pyarrow").Run() != nil {
		t.Skip("python3 with pyarrow not available")
	}
	path := filepath.Join(t.TempDir(), "m.arrow")
	if err := WriteFile(path, metrics()); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, math, pyarrow.feather as f
t = f.read_table(sys.argv[1])
assert t.column_names == ["round", "client", "acc", "loss"], t.column_names
assert t.column("round").to_pylist() == [1, 2, 3]
assert t.column("client").to_pylist() == ["c0", "c1", "ünïcode"]
acc = t.column("acc").to_pylist()
assert acc[0] == 0.5 and math.isnan(acc[1]) and acc[2] == -math.inf, acc
assert t.column("loss").to_pylist() == [2.5, 1.25, 0.625]
md = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
assert md == {"stage": "train", "method": "fedavg", "a": ""}, md
`
	out, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("pyarrow could not read the file: %v\n%s", err, out)
	}
}

func FuzzDecode(f *testing.F) {
	for _, tb := range []*Table{metrics(), {}, {Columns: []Column{StringCol("s", []string{"a", "bc"})}}} {
		b, err := Encode(tb)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("ARROW1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tb, err := Decode(b)
		if err != nil {
			return
		}
		if err := tb.Validate(); err != nil {
			t.Fatalf("Decode returned an invalid table: %v", err)
		}
		if _, err := Encode(tb); err != nil {
			t.Fatalf("decoded table does not re-encode: %v", err)
		}
	})
}

// Nulls (Valid) and bool columns survive Arrow and read back; CSV writes a null as an empty
// field; a table without Valid encodes as before (no nullable fields).
func TestNullsAndBoolsRoundTrip(t *testing.T) {
	in := &Table{Columns: []Column{
		{Name: "alpha", Kind: KindFloat64, Float64: []float64{0.5, 0}, Valid: []bool{true, false}},
		{Name: "shards", Kind: KindInt64, Int64: []int64{0, 2}, Valid: []bool{false, true}},
		BoolCol("split", []bool{true, false}),
	}}
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if a := out.Col("alpha"); a.Null(0) || !a.Null(1) || a.Float64[0] != 0.5 {
		t.Errorf("alpha = %+v", a)
	}
	if s := out.Col("shards"); !s.Null(0) || s.Null(1) || s.Int64[1] != 2 {
		t.Errorf("shards = %+v", s)
	}
	if s := out.Col("split"); s.Kind != KindBool || s.Valid != nil || !s.Bool[0] || s.Bool[1] {
		t.Errorf("split = %+v", s)
	}
	csv, err := EncodeCSV(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := "alpha,shards,split\n0.5,,true\n,2,false\n"; string(csv) != want {
		t.Errorf("CSV = %q, want %q", csv, want)
	}
	bad := &Table{Columns: []Column{{Name: "x", Int64: []int64{1}, Valid: []bool{}}}}
	if err := bad.Validate(); err == nil {
		t.Error("a Valid of the wrong length validated")
	}
}
