// Package table is fedpipe's codec for metric tables: a small typed columnar
// API (Table, Column) stored as Arrow IPC files ("Feather v2"), which pandas,
// polars, DuckDB and Arrow itself read directly. The rest of fedpipe uses
// this package and never touches Arrow types.
package table

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Kind is a column's element type.
type Kind uint8

// The column kinds and the Arrow types they are stored as.
const (
	KindUnset   Kind = iota // infer from the one non-nil slice (see Column)
	KindInt64               // Arrow int64
	KindFloat64             // Arrow float64 (NaN and ±Inf allowed)
	KindString              // Arrow utf8 (large_utf8 is also read)
	KindBool                // Arrow bool
)

// String returns the kind's name ("int64", "float64", "string" or "unset").
func (k Kind) String() string {
	switch k {
	case KindInt64:
		return "int64"
	case KindFloat64:
		return "float64"
	case KindString:
		return "string"
	case KindBool:
		return "bool"
	}
	return "unset"
}

// A Column is one named column. Exactly one of Int64, Float64, String and
// Bool holds its values, and it must be the one Kind names; the others are
// nil. A Column built literally may leave Kind as KindUnset, in which case
// exactly one of the slices must be non-nil (so an empty column needs a
// non-nil empty slice or an explicit Kind). Columns returned by Decode always
// have Kind set and a non-nil slice.
//
// Valid, when not nil, has one entry per value and false marks a null (a
// setting that does not apply to a run, in an exported table): the value
// beside it is the kind's zero and means nothing. Nil: no value is null, as
// in every table the stages store.
type Column struct {
	Name    string
	Kind    Kind
	Int64   []int64
	Float64 []float64
	String  []string
	Bool    []bool
	Valid   []bool
}

// Int64Col returns an int64 column.
func Int64Col(name string, v []int64) Column {
	return Column{Name: name, Kind: KindInt64, Int64: nonNil(v)}
}

// Float64Col returns a float64 column.
func Float64Col(name string, v []float64) Column {
	return Column{Name: name, Kind: KindFloat64, Float64: nonNil(v)}
}

// StringCol returns a string column.
func StringCol(name string, v []string) Column {
	return Column{Name: name, Kind: KindString, String: nonNil(v)}
}

// BoolCol returns a bool column.
func BoolCol(name string, v []bool) Column {
	return Column{Name: name, Kind: KindBool, Bool: nonNil(v)}
}

// Null reports whether row i of c is null.
func (c *Column) Null(i int) bool {
	return c.Valid != nil && !c.Valid[i]
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

// kind returns c's effective kind, or an error if its slices contradict it.
func (c *Column) kind() (Kind, error) {
	set := []Kind{}
	if c.Int64 != nil {
		set = append(set, KindInt64)
	}
	if c.Float64 != nil {
		set = append(set, KindFloat64)
	}
	if c.String != nil {
		set = append(set, KindString)
	}
	if c.Bool != nil {
		set = append(set, KindBool)
	}
	switch {
	case c.Kind > KindBool:
		return 0, fmt.Errorf("column %q: unknown kind %d", c.Name, c.Kind)
	case len(set) > 1:
		return 0, fmt.Errorf("column %q: more than one of Int64, Float64, String, Bool is set", c.Name)
	case c.Kind == KindUnset && len(set) == 0:
		return 0, fmt.Errorf("column %q: no values slice set and no Kind", c.Name)
	case c.Kind == KindUnset:
		return set[0], nil
	case len(set) == 1 && set[0] != c.Kind:
		return 0, fmt.Errorf("column %q: Kind is %v but the %v slice is set", c.Name, c.Kind, set[0])
	}
	return c.Kind, nil
}

// Len is the number of values in c.
func (c *Column) Len() int {
	return len(c.Int64) + len(c.Float64) + len(c.String) + len(c.Bool) // at most one is non-empty
}

// A Table is an ordered list of equal-length columns plus string metadata
// (stored as Arrow schema metadata). The zero Table is valid and empty.
type Table struct {
	Columns []Column
	Meta    map[string]string
}

// NumRows is the length of t's columns (0 if it has none). It is meaningful
// only if t is valid.
func (t *Table) NumRows() int {
	if len(t.Columns) == 0 {
		return 0
	}
	return t.Columns[0].Len()
}

// Col returns the column named name, or nil.
func (t *Table) Col(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// Validate reports an error unless every column has a non-empty name unique
// in t, a consistent kind (see Column), and the same length as the first.
func (t *Table) Validate() error {
	seen := make(map[string]bool, len(t.Columns))
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Name == "" {
			return fmt.Errorf("table: column %d has no name", i)
		}
		if seen[c.Name] {
			return fmt.Errorf("table: duplicate column %q", c.Name)
		}
		seen[c.Name] = true
		if _, err := c.kind(); err != nil {
			return fmt.Errorf("table: %v", err)
		}
		if c.Len() != t.NumRows() {
			return fmt.Errorf("table: column %q has %d rows, column %q has %d", c.Name, c.Len(), t.Columns[0].Name, t.NumRows())
		}
		if c.Valid != nil && len(c.Valid) != c.Len() {
			return fmt.Errorf("table: column %q has %d values and %d validity entries", c.Name, c.Len(), len(c.Valid))
		}
	}
	return nil
}

// Encode returns t as an Arrow IPC file (Feather v2): one uncompressed record
// batch holding every row, columns in order, Meta as schema metadata with
// keys sorted. The bytes depend only on t's contents, so equal tables encode
// identically. It returns an error if t is not valid.
func Encode(t *Table) ([]byte, error) {
	schema, rec, mem, err := record(t)
	if err != nil {
		return nil, err
	}
	defer rec.Release()

	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return nil, fmt.Errorf("table: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	return buf.Bytes(), nil
}

// record builds t as one Arrow record batch (the caller releases it).
func record(t *Table) (*arrow.Schema, arrow.RecordBatch, memory.Allocator, error) {
	if err := t.Validate(); err != nil {
		return nil, nil, nil, err
	}
	mem := memory.NewGoAllocator()
	fields := make([]arrow.Field, len(t.Columns))
	cols := make([]arrow.Array, len(t.Columns))
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i := range t.Columns {
		c := &t.Columns[i]
		k, _ := c.kind()
		switch k {
		case KindInt64:
			cols[i] = build(array.NewInt64Builder(mem), c.Int64, c.Valid)
		case KindFloat64:
			cols[i] = build(array.NewFloat64Builder(mem), c.Float64, c.Valid)
		case KindString:
			cols[i] = build(array.NewStringBuilder(mem), c.String, c.Valid)
		case KindBool:
			cols[i] = build(array.NewBooleanBuilder(mem), c.Bool, c.Valid)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: cols[i].DataType(), Nullable: c.Valid != nil}
	}
	keys := make([]string, 0, len(t.Meta))
	for k := range t.Meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = t.Meta[k]
	}
	var md *arrow.Metadata
	if len(keys) > 0 {
		m := arrow.NewMetadata(keys, vals)
		md = &m
	}
	schema := arrow.NewSchema(fields, md)
	return schema, array.NewRecordBatch(schema, cols, int64(t.NumRows())), mem, nil
}

// builder is what build needs of an Arrow array builder holding values of type T.
type builder[T any] interface {
	AppendValues(v []T, valid []bool)
	NewArray() arrow.Array
	Release()
}

// build returns an array of v made by b (valid: nil, or false where a value is null), and
// releases b.
func build[T any](b builder[T], v []T, valid []bool) arrow.Array {
	defer b.Release()
	b.AppendValues(v, valid)
	return b.NewArray()
}

// Decode parses an Arrow IPC file. It accepts files written by Encode and by
// other Arrow writers as long as every column is int64, float64, utf8,
// large_utf8 or bool; nulls set Valid; record batches are concatenated. It never panics
// and returns an error for anything else, including garbage. Meta is nil if
// the file has no schema metadata.
func Decode(b []byte) (t *Table, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, fmt.Errorf("table: malformed Arrow file: %v", p)
		}
	}()
	// Arrow allocates buffers of the sizes the file declares; capping the
	// total keeps garbage from requesting absurd amounts of memory.
	if err := verifyArrowFile(b); err != nil {
		return nil, fmt.Errorf("table: not a readable Arrow IPC file: %w", err)
	}
	mem := &cappedAllocator{mem: memory.NewGoAllocator(), left: 8*int64(len(b)) + 1<<20}
	r, err := ipc.NewFileReader(bytes.NewReader(b), ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("table: not an Arrow IPC file: %w", err)
	}
	defer r.Close()
	schema := r.Schema()
	t = &Table{Columns: make([]Column, schema.NumFields())}
	for i, f := range schema.Fields() {
		c := Column{Name: f.Name}
		switch f.Type.ID() {
		case arrow.INT64:
			c.Kind, c.Int64 = KindInt64, []int64{}
		case arrow.FLOAT64:
			c.Kind, c.Float64 = KindFloat64, []float64{}
		case arrow.STRING, arrow.LARGE_STRING:
			c.Kind, c.String = KindString, []string{}
		case arrow.BOOL:
			c.Kind, c.Bool = KindBool, []bool{}
		default:
			return nil, fmt.Errorf("table: column %q has Arrow type %v; only int64, float64, utf8 and bool are supported", f.Name, f.Type)
		}
		t.Columns[i] = c
	}
	if md := schema.Metadata(); md.Len() > 0 {
		t.Meta = make(map[string]string, md.Len())
		for i, k := range md.Keys() {
			t.Meta[k] = md.Values()[i]
		}
	}
	for n := 0; n < r.NumRecords(); n++ {
		rec, err := r.RecordBatch(n)
		if err != nil {
			return nil, fmt.Errorf("table: record batch %d: %w", n, err)
		}
		if err := array.ValidateRecordFull(rec); err != nil {
			return nil, fmt.Errorf("table: record batch %d: %w", n, err)
		}
		for i := range t.Columns {
			c := &t.Columns[i]
			a := rec.Column(i)
			if a.NullN() != 0 && c.Valid == nil {
				c.Valid = make([]bool, c.Len()) // earlier batches' values all valid
				for j := range c.Valid {
					c.Valid[j] = true
				}
			}
			if c.Valid != nil {
				for j := 0; j < a.Len(); j++ {
					c.Valid = append(c.Valid, a.IsValid(j))
				}
			}
			switch a := a.(type) {
			case *array.Int64:
				c.Int64 = append(c.Int64, a.Int64Values()...)
			case *array.Float64:
				c.Float64 = append(c.Float64, a.Float64Values()...)
			case *array.String:
				for j := 0; j < a.Len(); j++ {
					c.String = append(c.String, a.Value(j))
				}
			case *array.LargeString:
				for j := 0; j < a.Len(); j++ {
					c.String = append(c.String, a.Value(j))
				}
			case *array.Boolean:
				for j := 0; j < a.Len(); j++ {
					c.Bool = append(c.Bool, a.Value(j))
				}
			default:
				return nil, fmt.Errorf("table: column %q: unexpected array %T", c.Name, a)
			}
		}
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// errTooBig is the panic value cappedAllocator raises; Decode recovers it.
var errTooBig = errors.New("file declares more data than it holds")

// cappedAllocator fails (by panicking, as Arrow's allocators do on
// exhaustion) once more than left bytes have been requested in total.
type cappedAllocator struct {
	mem  memory.Allocator
	left int64
}

func (a *cappedAllocator) Allocate(size int) []byte {
	a.take(size)
	return a.mem.Allocate(size)
}

func (a *cappedAllocator) Reallocate(size int, b []byte) []byte {
	a.take(size - len(b))
	return a.mem.Reallocate(size, b)
}

func (a *cappedAllocator) Free(b []byte) { a.mem.Free(b) }

func (a *cappedAllocator) take(n int) {
	if n < 0 {
		return
	}
	a.left -= int64(n)
	if a.left < 0 {
		panic(errTooBig)
	}
}

// WriteFile writes t, encoded by Encode, to path atomically: it writes a
// temporary file in the same directory and renames it over path, so readers
// see either the old file or the complete new one.
func WriteFile(path string, t *Table) error {
	b, err := Encode(t)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("table: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("table: write %s: %w", path, err)
	}
	return nil
}

// ReadFile reads and decodes the Arrow IPC file at path.
func ReadFile(path string) (*Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	t, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
