package manifest

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// InputError is an error in user input (a manifest, a flag, a path). It names the place
// — file:line:column and the field path — and maps to exit code 2.
type InputError struct {
	File   string
	Line   int
	Column int
	Field  string
	Msg    string
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// decoder fills typed structs from yaml nodes, keeping positions for error messages.
// Struct fields are matched by their `yaml:"name"` tag; a field tagged `yaml:"-"` is never
// read. Unknown keys are errors that suggest the nearest known key.
type decoder struct {
	file string
	pos  map[string]Pos // where each field path was set
}

func (d *decoder) errf(n *yaml.Node, field, format string, args ...any) error {
	e := &InputError{File: d.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

var nodeType = reflect.TypeOf(yaml.Node{})

// decode stores the value of node n into v (addressable), naming field in errors.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, field string) error {
	if d.pos != nil && field != "" {
		d.pos[field] = Pos{Line: n.Line, Column: n.Column}
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if v.Type() == nodeType {
		v.Set(reflect.ValueOf(*n))
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if n.Tag == "!!null" {
			v.Set(reflect.Zero(v.Type()))
			return nil
		}
		// A fresh value every time: runs expanded from one manifest copy its structs,
		// so decoding into the pointee in place would change every run's value at once.
		nv := reflect.New(v.Type().Elem())
		if !v.IsNil() {
			nv.Elem().Set(v.Elem())
		}
		if err := d.decode(n, nv.Elem(), field); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	case reflect.Struct:
		return d.decodeStruct(n, v, field)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			// A scalar where a list is expected is taken as a one-element list.
			if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
				s := reflect.MakeSlice(v.Type(), 1, 1)
				if err := d.decode(n, s.Index(0), field+"[0]"); err != nil {
					return err
				}
				v.Set(s)
				return nil
			}
			return d.errf(n, field, "expected a list, got %s", kindName(n))
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			if err := d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", field, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return d.errf(n, field, "expected a mapping, got %s", kindName(n))
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			ev := reflect.New(v.Type().Elem()).Elem()
			if err := d.decode(val, ev, joinField(field, k.Value)); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k.Value), ev)
		}
		v.Set(m)
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return d.errf(n, field, "expected %s, got %s", typeName(v.Type()), kindName(n))
	}
	s := n.Value
	switch v.Kind() {
	case reflect.String:
		if n.Tag != "!!str" && n.Tag != "!!int" && n.Tag != "!!float" && n.Tag != "!!bool" {
			return d.errf(n, field, "expected a string, got %s", kindName(n))
		}
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil || n.Tag == "!!str" && n.Style != 0 {
			return d.errf(n, field, "expected true or false, got %q", s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
		if err != nil {
			// Accept integral floats such as 1e3.
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return d.errf(n, field, "expected an integer, got %q", s)
			}
			i = int64(f)
		}
		if v.OverflowInt(i) {
			return d.errf(n, field, "integer %s out of range", s)
		}
		v.SetInt(i)
	case reflect.Uint64:
		i, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return d.errf(n, field, "expected a non-negative integer, got %q", s)
		}
		v.SetUint(i)
	case reflect.Float64:
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return d.errf(n, field, "expected a number, got %q", s)
		}
		v.SetFloat(f)
	default:
		return d.errf(n, field, "unsupported field type %s", v.Type())
	}
	return nil
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, field string) error {
	if n.Kind != yaml.MappingNode {
		if n.Tag == "!!null" {
			return nil
		}
		return d.errf(n, field, "expected a mapping with keys %s, got %s", strings.Join(structKeys(v.Type()), ", "), kindName(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		name := k.Value
		f := joinField(field, name)
		if seen[name] {
			return d.errf(k, f, "duplicate key")
		}
		seen[name] = true
		idx := fieldIndex(v.Type(), name)
		if idx < 0 {
			msg := "unknown key"
			if s := nearest(name, structKeys(v.Type())); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += fmt.Sprintf(" (valid keys: %s)", strings.Join(structKeys(v.Type()), ", "))
			}
			return d.errf(k, f, "%s", msg)
		}
		if err := d.decode(val, v.Field(idx), f); err != nil {
			return err
		}
		if err := d.check(val, v.Field(idx), v.Type().Field(idx).Tag.Get("check"), f); err != nil {
			return err
		}
	}
	return nil
}

// Pos is a position in a manifest file.
type Pos struct{ Line, Column int }

func joinField(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func fieldIndex(t reflect.Type, name string) int {
	for i := 0; i < t.NumField(); i++ {
		if tagName(t.Field(i)) == name {
			return i
		}
	}
	return -1
}

func tagName(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	if tag == "" || tag == "-" {
		return ""
	}
	return strings.Split(tag, ",")[0]
}

func structKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if n := tagName(t.Field(i)); n != "" {
			keys = append(keys, n)
		}
	}
	sort.Strings(keys)
	return keys
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.Tag == "!!null" {
		return "nothing (null)"
	}
	return fmt.Sprintf("%q", n.Value)
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	}
	return t.String()
}

// nearest returns the candidate closest to s by edit distance, if it is close enough to be
// a plausible typo.
func nearest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= 2 || bestD <= len(s)/3 || (best != "" && (strings.Contains(best, s) || strings.Contains(s, best))) {
		return best
	}
	return ""
}

// editDistance is the optimal-string-alignment distance between a and b: insertions,
// deletions, substitutions and transpositions of adjacent bytes each count one, so that
// "fedopb" is one edit from "fedobp".
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// check applies a field's `check` tag to its decoded value. Rules (comma-separated):
// gt0 (> 0), ge0 (>= 0), frac (in (0, 1]), unit (in [0, 1]), lt1 (< 1), oneof=a|b|c,
// dataset (a registered dataset's name, DatasetNames).
func (d *decoder) check(n *yaml.Node, v reflect.Value, rules, field string) error {
	if rules == "" {
		return nil
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Slice {
		for i := 0; i < v.Len(); i++ {
			if err := d.check(n, v.Index(i), rules, field); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range strings.Split(rules, ",") {
		if r == "dataset" {
			if msg := checkDatasetName(v.String()); msg != "" {
				return d.errf(n, field, "%s", msg)
			}
			continue
		}
		if strings.HasPrefix(r, "oneof=") {
			opts := strings.Split(strings.TrimPrefix(r, "oneof="), "|")
			s := v.String()
			if v.CanInt() {
				s = strconv.FormatInt(v.Int(), 10)
			}
			ok := false
			for _, o := range opts {
				ok = ok || o == s
			}
			if !ok {
				msg := fmt.Sprintf("%q is not one of %s", s, strings.Join(opts, ", "))
				if near := nearest(s, opts); near != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", near)
				}
				return d.errf(n, field, "%s", msg)
			}
			continue
		}
		var x float64
		switch v.Kind() {
		case reflect.Int, reflect.Int64, reflect.Int32:
			x = float64(v.Int())
		case reflect.Float64:
			x = v.Float()
		default:
			continue
		}
		bad := ""
		switch r {
		case "gt0":
			if !(x > 0) {
				bad = "must be greater than 0"
			}
		case "ge0":
			if !(x >= 0) {
				bad = "must be 0 or more"
			}
		case "frac":
			if !(x > 0 && x <= 1) {
				bad = "must be in (0, 1]"
			}
		case "unit":
			if !(x >= 0 && x <= 1) {
				bad = "must be in [0, 1]"
			}
		case "lt1":
			if !(x < 1) {
				bad = "must be less than 1"
			}
		default:
			panic("pipeline: unknown check rule " + r)
		}
		if bad != "" {
			return d.errf(n, field, "%s, got %v", bad, strconv.FormatFloat(x, 'g', -1, 64))
		}
	}
	return nil
}
