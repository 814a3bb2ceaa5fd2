package manifest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Overrides (`fedpipe run M --set train.lr=0.05`) are applied to the manifest's YAML node
// tree before it is decoded, so that an overridden field is decoded and validated exactly
// like one written in the file. The nodes an override adds carry a negative line number,
// -(i+1) for the i-th override, which errors turn back into the override's text: an error
// in an override names the override, not a line of the file.

func unwrap(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok && u.Unwrap() != nil {
		return u.Unwrap()
	}
	return err
}

// overrideError names the override whose node an error points at (a negative line), and
// leaves other errors as they are.
func overrideError(err error, overrides []string) error {
	e, ok := err.(*InputError)
	if !ok || e.Line >= 0 || -e.Line > len(overrides) {
		return err
	}
	c := *e
	o := overrides[-e.Line-1]
	c.File, c.Line, c.Column = "--set "+o, 0, 0
	// seeds=0,1,2 reads as the one string "0,1,2": say how a list is written.
	if path, value, ok := strings.Cut(o, "="); ok && strings.Contains(value, ",") {
		if v := strings.TrimSpace(value); !strings.HasPrefix(v, "[") && !strings.HasPrefix(v, "{") {
			c.Msg += fmt.Sprintf("; a list is written in brackets, quoted for the shell: -S '%s=[%s]'", strings.TrimSpace(path), v)
		}
	}
	return &c
}

// ApplyOverride sets the field at a dotted path in a manifest's root mapping node to a
// YAML value: "train.lr=0.05", "seeds=[0,1]", "methods.fedobp.params.q=0.9995" (a method
// by its label or index), "grid.partition.alpha=[0.1,0.5]" (after "grid", the rest of
// the path is one key). Missing mappings on the way are created. index numbers the
// override for error positions. It checks the path's shape only; what the value means is
// checked when the tree is decoded.
func ApplyOverride(root *yaml.Node, override string, index int) error {
	path, value, ok := strings.Cut(override, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" {
		return fmt.Errorf("want KEY=VALUE (e.g. train.lr=0.05)")
	}
	line := -(index + 1)
	var val yaml.Node
	if err := yaml.Unmarshal([]byte(value), &val); err != nil {
		return fmt.Errorf("value %q is not YAML: %v", value, err)
	}
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""}
	if val.Kind == yaml.DocumentNode && len(val.Content) > 0 {
		v = val.Content[0]
	}
	mark(v, line)
	segs := splitPath(path)
	n := root
	for i, seg := range segs {
		last := i == len(segs)-1
		switch n.Kind {
		case yaml.MappingNode:
			key := seg
			if seg == "grid" && !last {
				// Grid keys are themselves dotted paths.
				rest := strings.Join(segs[i+1:], ".")
				setKey(n, "grid", &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, line, false)
				setKey(mapValue(n, "grid"), rest, v, line, true)
				return nil
			}
			if last {
				setKey(n, key, v, line, true)
				return nil
			}
			setKey(n, key, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, line, false)
			next := mapValue(n, key)
			if next.Kind != yaml.MappingNode && next.Kind != yaml.SequenceNode {
				return fmt.Errorf("%s is not a section (it holds a %s)", strings.Join(segs[:i+1], "."), kindName(next))
			}
			n = next
		case yaml.SequenceNode:
			j, err := seqIndex(n, seg, strings.Join(segs[:i], "."))
			if err != nil {
				return err
			}
			if last {
				n.Content[j] = v
				return nil
			}
			n = n.Content[j]
			if n.Kind != yaml.MappingNode {
				return fmt.Errorf("%s[%d] is not a section", strings.Join(segs[:i], "."), j)
			}
		default:
			return fmt.Errorf("%s is not a section", strings.Join(segs[:i], "."))
		}
	}
	return nil
}

// splitPath splits a dotted path, turning "methods[1]" into "methods", "1".
func splitPath(path string) []string {
	var out []string
	for _, s := range strings.Split(path, ".") {
		for {
			k, rest, ok := strings.Cut(s, "[")
			if !ok {
				break
			}
			idx, after, _ := strings.Cut(rest, "]")
			if k != "" {
				out = append(out, k)
			}
			out = append(out, idx)
			s = after
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// seqIndex finds an element of a list by index or, for a list of mappings, by its name
// (methods by label).
func seqIndex(n *yaml.Node, seg, field string) (int, error) {
	if j, err := strconv.Atoi(seg); err == nil {
		if j < 0 || j >= len(n.Content) {
			return 0, fmt.Errorf("%s has %d entries, no [%d]", field, len(n.Content), j)
		}
		return j, nil
	}
	var names []string
	for j, c := range n.Content {
		if c.Kind != yaml.MappingNode {
			continue
		}
		if nm := mapValue(c, "name"); nm != nil && nm.Kind == yaml.ScalarNode {
			if nm.Value == seg {
				return j, nil
			}
			names = append(names, nm.Value)
		}
	}
	msg := fmt.Sprintf("%s has no entry named %q", field, seg)
	if near := nearest(seg, names); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	} else if len(names) > 0 {
		msg += " (" + strings.Join(names, ", ") + ")"
	}
	return 0, fmt.Errorf("%s", msg)
}

// mapValue returns the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// setKey sets key to v in mapping n: replacing its value when replace (or when it holds
// null), else only adding it when absent.
func setKey(n *yaml.Node, key string, v *yaml.Node, line int, replace bool) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			if replace || n.Content[i+1].Tag == "!!null" {
				mark(v, line)
				n.Content[i+1] = v
			}
			return
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	mark(k, line)
	mark(v, line)
	n.Content = append(n.Content, k, v)
}

// mark gives n and everything under it the line of an override.
func mark(n *yaml.Node, line int) {
	n.Line, n.Column = line, 0
	for _, c := range n.Content {
		mark(c, line)
	}
}

// effectiveYAML is the manifest as decoded: the file with its overrides applied.
func effectiveYAML(root *yaml.Node) []byte {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil
	}
	_ = enc.Close()
	return b.Bytes()
}
