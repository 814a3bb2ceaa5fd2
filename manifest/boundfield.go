package manifest

// Where a bound error points: the line of the grid or method train block that set the
// value, else its section's.

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// boundField names where a run's value of path was set: the method's own train block or
// grid, the top-level grid, or the field itself.
func (m *Manifest) boundField(path string, mi int) string {
	sec, name, _ := strings.Cut(path, ".")
	f := fmt.Sprintf("methods[%d]", mi)
	if sec == "train" {
		if _, set := m.Pos[f+".train."+name]; set {
			return f + ".train." + name
		}
		if findKey(&m.Methods[mi].Train, name) != nil {
			return f + ".train." + name
		}
	}
	if findKey(&m.Methods[mi].Grid, path) != nil {
		return f + ".grid." + path
	}
	if findKey(&m.Grid, path) != nil {
		return "grid." + path
	}
	return path
}

// errAtField is ErrAt that also finds positions inside grids and method train blocks, and
// falls back on the section's line, so that every bound error names a line.
func (m *Manifest) errAtField(field, format string, args ...any) error {
	e := m.ErrAt(field, format, args...).(*InputError)
	if e.Line > 0 {
		return e
	}
	var n *yaml.Node
	switch {
	case strings.HasPrefix(field, "grid."):
		n = findKey(&m.Grid, strings.TrimPrefix(field, "grid."))
	case strings.HasPrefix(field, "methods["):
		var i int
		var rest string
		if _, err := fmt.Sscanf(field, "methods[%d]", &i); err == nil && i < len(m.Methods) {
			rest = field[strings.Index(field, "]")+2:]
			if g, ok := strings.CutPrefix(rest, "grid."); ok {
				n = findKey(&m.Methods[i].Grid, g)
			} else if t, ok := strings.CutPrefix(rest, "train."); ok {
				n = findKey(&m.Methods[i].Train, t)
			}
		}
	}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
		return e
	}
	sec, _, _ := strings.Cut(field, ".")
	if p, ok := m.Pos[sec]; ok {
		e.Line, e.Column = p.Line, p.Column
	} else {
		e.Line = 1
	}
	return e
}

// findKey returns the key node named key in mapping n, or nil.
func findKey(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}
