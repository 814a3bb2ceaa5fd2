package manifest

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Flatten flattens a manifest's YAML into dotted paths: methods by label, lists of
// scalars as flow lists; expectations and claims are left out (they are not parameters).
func Flatten(b []byte) map[string]string {
	out := map[string]string{}
	var root yaml.Node
	if yaml.Unmarshal(b, &root) != nil || len(root.Content) == 0 {
		return out
	}
	flattenNode(root.Content[0], "", out)
	for k := range out {
		if k == "expect" || strings.HasPrefix(k, "expect.") || k == "claims" || strings.HasPrefix(k, "claims.") || k == "description" {
			delete(out, k)
		}
	}
	return out
}

// flattenNode adds n's scalars to out under prefix, dotted, methods by their name.
func flattenNode(n *yaml.Node, prefix string, out map[string]string) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			flattenNode(n.Content[i+1], join(n.Content[i].Value), out)
		}
	case yaml.SequenceNode:
		scalars := true
		for _, c := range n.Content {
			scalars = scalars && c.Kind == yaml.ScalarNode
		}
		if scalars {
			var vs []string
			for _, c := range n.Content {
				vs = append(vs, c.Value)
			}
			out[prefix] = "[" + strings.Join(vs, ", ") + "]"
			return
		}
		for i, c := range n.Content {
			k := strconv.Itoa(i)
			if c.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(c.Content); j += 2 {
					if c.Content[j].Value == "name" {
						k = c.Content[j+1].Value
					}
				}
			}
			flattenNode(c, join(k), out)
		}
	case yaml.AliasNode:
		flattenNode(n.Alias, prefix, out)
	default:
		out[prefix] = n.Value
	}
}

// FlattenRun flattens a resolved run (defaults filled in) into dotted paths.
func FlattenRun(r *Run) map[string]string {
	c := *r
	c.Vary, c.Seed = nil, 0
	b, err := yaml.Marshal(c)
	if err != nil {
		return map[string]string{}
	}
	out := Flatten(b)
	delete(out, "vary")
	delete(out, "seed")
	return out
}
