// Package results holds every table fedpipe stores: one row type per table (train
// metrics, selection, mask IoU, communication, work and cost; the partition's assignment;
// the evaluate stage's clients and summary; the shift stage's clients and summary; the
// report stage's runs) and one generic codec between slices of those rows and Arrow IPC
// files (artifacts/table). The stages write and read these tables, and `fedpipe verify` and
// `fedpipe report` read them, through this package alone, so neither reader links the
// trainer. (`fedpipe export` copies every stored table as it is, whatever its columns,
// with artifacts/table.)
//
// A row type is a struct whose fields are tagged with their column names:
//
//	type Comm struct {
//		Round  int   `arrow:"round"`
//		Client int   `arrow:"client"`
//		Down   int64 `arrow:"bytes_down"`
//		Up     int64 `arrow:"bytes_up"`
//	}
//
// Columns appear in field order. Signed integer fields are stored as int64 columns,
// float32 and float64 fields as float64, strings as utf8. An untagged field of struct
// type (embedded or not) contributes its own fields' columns in place; `arrow:"-"` skips a
// field; `arrow:"name,optional"` marks a column that a table may lack (it decodes as the
// zero value, and Encode leaves it out when asked to). Any other untagged field is an
// error, so a field cannot be forgotten silently.
package results

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/fedpipe/fedpipe/artifacts/table"
)

// Field is one column of a row type's schema.
type Field struct {
	Name string     // the column's name, from the field's arrow tag
	Kind table.Kind // how the field's Go type is stored
	// Optional columns may be missing from a table (see the package comment).
	Optional bool
	// index is the field's path in the row struct (reflect.Value.FieldByIndex).
	index []int
}

// computer is implemented by row types that store columns computed from their fields
// (Selection's fraction): Encode writes them after the fields' columns, one value per
// row under each of names, and Decode does not read them back.
type computer interface {
	computed() (names []string, values []float64)
}

// schemas caches each row type's fields (reflect.Type → []Field).
var schemas sync.Map

// Schema returns the columns of row type T in order, computed columns excluded. It
// returns an error if T is not a struct or has a field it cannot store.
func Schema[T any]() ([]Field, error) {
	return schemaOf(reflect.TypeFor[T]())
}

func schemaOf(t reflect.Type) ([]Field, error) {
	if f, ok := schemas.Load(t); ok {
		return f.([]Field), nil
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("results: row type %v is not a struct", t)
	}
	var fields []Field
	if err := addFields(t, nil, &fields); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Name] {
			return nil, fmt.Errorf("results: row type %v: two fields store column %q", t, f.Name)
		}
		seen[f.Name] = true
	}
	schemas.Store(t, fields)
	return fields, nil
}

// addFields appends struct type t's columns (nested in the row at path) to out.
func addFields(t reflect.Type, path []int, out *[]Field) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		idx := append(slices.Clone(path), i)
		tag, hasTag := sf.Tag.Lookup("arrow")
		if tag == "-" {
			continue
		}
		if !hasTag {
			if sf.Type.Kind() == reflect.Struct {
				if err := addFields(sf.Type, idx, out); err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("results: %v.%s has no arrow tag", t, sf.Name)
		}
		if !sf.IsExported() {
			return fmt.Errorf("results: %v.%s is unexported", t, sf.Name)
		}
		name, opts, _ := strings.Cut(tag, ",")
		f := Field{Name: name, index: idx}
		switch opts {
		case "":
		case "optional":
			f.Optional = true
		default:
			return fmt.Errorf("results: %v.%s: unknown tag option %q", t, sf.Name, opts)
		}
		if name == "" {
			return fmt.Errorf("results: %v.%s: empty column name", t, sf.Name)
		}
		switch sf.Type.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.Kind = table.KindInt64
		case reflect.Float32, reflect.Float64:
			f.Kind = table.KindFloat64
		case reflect.String:
			f.Kind = table.KindString
		default:
			return fmt.Errorf("results: %v.%s: type %v cannot be stored (use an int, float or string)", t, sf.Name, sf.Type)
		}
		*out = append(*out, f)
	}
	return nil
}

// ToTable lays rows out as a table: one column per field of T in order, then T's
// computed columns, with meta as its metadata. omit names optional columns to leave out
// (the shift tables' CIFAR-10-C counts on runs without CIFAR-10-C); naming any other
// column is an error.
func ToTable[T any](rows []T, meta map[string]string, omit ...string) (*table.Table, error) {
	fields, err := Schema[T]()
	if err != nil {
		return nil, err
	}
	for _, name := range omit {
		i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == name })
		if i < 0 || !fields[i].Optional {
			return nil, fmt.Errorf("results: %v has no optional column %q to omit", reflect.TypeFor[T](), name)
		}
	}
	t := &table.Table{Meta: meta}
	vals := make([]reflect.Value, len(rows))
	for i := range rows {
		vals[i] = reflect.ValueOf(&rows[i]).Elem()
	}
	for _, f := range fields {
		if slices.Contains(omit, f.Name) {
			continue
		}
		t.Columns = append(t.Columns, column(f, vals))
	}
	if c, ok := any(*new(T)).(computer); ok {
		names, _ := c.computed()
		cols := make([][]float64, len(names))
		for _, r := range rows {
			_, v := any(r).(computer).computed()
			for j := range cols {
				cols[j] = append(cols[j], v[j])
			}
		}
		for j, name := range names {
			t.Columns = append(t.Columns, table.Float64Col(name, cols[j]))
		}
	}
	return t, nil
}

// column gathers field f of every row.
func column(f Field, rows []reflect.Value) table.Column {
	switch f.Kind {
	case table.KindInt64:
		v := make([]int64, len(rows))
		for i, r := range rows {
			v[i] = r.FieldByIndex(f.index).Int()
		}
		return table.Int64Col(f.Name, v)
	case table.KindFloat64:
		v := make([]float64, len(rows))
		for i, r := range rows {
			v[i] = r.FieldByIndex(f.index).Float()
		}
		return table.Float64Col(f.Name, v)
	default:
		v := make([]string, len(rows))
		for i, r := range rows {
			v[i] = r.FieldByIndex(f.index).String()
		}
		return table.StringCol(f.Name, v)
	}
}

// FromTable reads t's rows as T: each field from the column of its name, whatever the
// column's position; columns T does not name are ignored. A missing column that is not
// optional, or a column of another kind, is an error.
func FromTable[T any](t *table.Table) ([]T, error) {
	fields, err := Schema[T]()
	if err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	rows := make([]T, t.NumRows())
	for _, f := range fields {
		c := t.Col(f.Name)
		if c == nil {
			if f.Optional {
				continue
			}
			return nil, fmt.Errorf("results: %s table has no column %q", tableName[T](), f.Name)
		}
		if k := c.Len(); k != len(rows) || kindOf(c) != f.Kind {
			return nil, fmt.Errorf("results: %s table: column %q is %v, want %v", tableName[T](), f.Name, kindOf(c), f.Kind)
		}
		for i := range rows {
			v := reflect.ValueOf(&rows[i]).Elem().FieldByIndex(f.index)
			switch f.Kind {
			case table.KindInt64:
				x := c.Int64[i]
				if v.OverflowInt(x) {
					return nil, fmt.Errorf("results: %s table: column %q row %d: %d overflows %v", tableName[T](), f.Name, i, x, v.Type())
				}
				v.SetInt(x)
			case table.KindFloat64:
				v.SetFloat(c.Float64[i])
			default:
				v.SetString(c.String[i])
			}
		}
	}
	return rows, nil
}

// kindOf is c's kind, inferred from its slices when unset.
func kindOf(c *table.Column) table.Kind {
	switch {
	case c.Kind != table.KindUnset:
		return c.Kind
	case c.Int64 != nil:
		return table.KindInt64
	case c.Float64 != nil:
		return table.KindFloat64
	case c.String != nil:
		return table.KindString
	}
	return table.KindUnset
}

// tableName names T's table in errors ("results.Comm").
func tableName[T any]() string { return reflect.TypeFor[T]().String() }

// Encode returns rows as an Arrow IPC file (see ToTable for the layout and omit, and
// table.Encode for the bytes, which depend only on the rows and meta).
func Encode[T any](rows []T, meta map[string]string, omit ...string) ([]byte, error) {
	t, err := ToTable(rows, meta, omit...)
	if err != nil {
		return nil, err
	}
	return table.Encode(t)
}

// Decode parses an Arrow IPC file into rows of T and the table's metadata (nil when it
// has none). See FromTable for how columns are matched.
func Decode[T any](b []byte) ([]T, map[string]string, error) {
	t, err := table.Decode(b)
	if err != nil {
		return nil, nil, err
	}
	rows, err := FromTable[T](t)
	if err != nil {
		return nil, nil, err
	}
	return rows, t.Meta, nil
}

// DecodeOne is Decode for a table of exactly one row (an evaluate summary).
func DecodeOne[T any](b []byte) (T, map[string]string, error) {
	var zero T
	rows, meta, err := Decode[T](b)
	if err != nil {
		return zero, nil, err
	}
	if len(rows) != 1 {
		return zero, nil, fmt.Errorf("results: %s table has %d rows, want 1", tableName[T](), len(rows))
	}
	return rows[0], meta, nil
}
