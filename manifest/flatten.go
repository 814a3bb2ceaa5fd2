package manifest

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
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

// A Setting is one effective setting of a run, as exported tables carry it: a field of the
// manifest's dataset, partition, model, train or shift block (defaults and overrides
// applied), the method's algorithm, or one of its parameters.
type Setting struct {
	// Path is the field's dotted path: "train.rounds", "model.hidden", "params.q",
	// "options.score".
	Path string
	// Value is the setting typed as in the manifest: int64 (every integer field), float64,
	// string or bool; a list is its canonical text ("[64]", "[crop, flip]").
	Value any
	// Applies is false where the field means nothing for the run: a partition field of
	// another scheme (partition.alpha under natural), a generated dataset's parameter for
	// a dataset read from files, model.hidden for an architecture other than mlp, …, as the
	// field's `for` tag says. Such a setting is exported as null.
	Applies bool
}

// Column is the setting's column name in an exported table: its path with "." as "_"
// (train_rounds, model_hidden, params_q).
func (s Setting) Column() string { return strings.ReplaceAll(s.Path, ".", "_") }

// Settings lists run r's effective settings, derived from the schema (the yaml tags of
// DatasetSpec, PartitionSpec, ModelSpec, TrainSpec and, when the manifest asks for shifts,
// ShiftSpec) so that a field added to a spec is exported with no list to update: every
// field in declaration order, then "method.algorithm", then the method's parameters
// (params.<name>) and word options (options.<name>) sorted by name. partition.seed is the
// effective partition seed (Run.PartitionSeed). shift may be the zero ShiftSpec.
func Settings(r *Run, shift ShiftSpec) []Setting {
	var out []Setting
	blocks := []struct {
		name string
		v    any
	}{{"dataset", r.Dataset}, {"partition", r.Partition}, {"model", r.Model}, {"train", r.Train}}
	if !shift.Empty() {
		blocks = append(blocks, struct {
			name string
			v    any
		}{"shift", shift})
	}
	for _, b := range blocks {
		v := reflect.ValueOf(b.v)
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			s := Setting{Path: b.name + "." + name, Value: settingValue(v.Field(i)), Applies: r.applies(f.Tag.Get("for"))}
			if s.Path == "partition.seed" {
				s.Value = r.PartitionSeed()
			}
			out = append(out, s)
		}
	}
	out = append(out, Setting{Path: "method.algorithm", Value: r.Method, Applies: true})
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		out = append(out, Setting{Path: "params." + k, Value: r.Params[k], Applies: true})
	}
	for _, k := range slices.Sorted(maps.Keys(r.Options)) {
		out = append(out, Setting{Path: "options." + k, Value: r.Options[k], Applies: true})
	}
	return out
}

// settingValue is a spec field's value as Setting.Value holds it.
func settingValue(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Float32, reflect.Float64:
		return v.Float()
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Pointer:
		if v.IsNil() {
			return settingValue(reflect.Zero(v.Type().Elem()))
		}
		return settingValue(v.Elem())
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range parts {
			switch e := settingValue(v.Index(i)).(type) {
			case float64:
				parts[i] = strconv.FormatFloat(e, 'g', -1, 64)
			default:
				parts[i] = fmt.Sprint(e)
			}
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

// applies reports whether a field with the `for` tag cond means something for r (true
// for a tag it does not know, which forTagKnown refuses in a test): "" always;
// "scheme=a|b" under those partition schemes; "arch=a|b" for those architectures;
// "generated" for a generated dataset (DatasetDef.Generated); "batchnorm" for a model with
// BatchNorm; "augment=crop" when train.augment lists crop.
func (r *Run) applies(cond string) bool {
	key, vals, _ := strings.Cut(cond, "=")
	in := func(v string) bool { return slices.Contains(strings.Split(vals, "|"), v) }
	switch key {
	case "":
		return true
	case "scheme":
		return in(r.Partition.Scheme)
	case "arch":
		return in(r.Model.Arch)
	case "generated":
		return datasetDef(r.Dataset.Name).Generated
	case "batchnorm":
		return r.Model.HasBatchNorm()
	case "augment":
		return slices.ContainsFunc(r.Train.Augment, in)
	}
	return true
}

// forTagKnown reports whether cond is a `for` tag applies understands.
func forTagKnown(cond string) bool {
	key, vals, _ := strings.Cut(cond, "=")
	switch key {
	case "":
		return vals == ""
	case "scheme", "arch", "augment":
		return vals != ""
	case "generated", "batchnorm":
		return vals == "" && !strings.Contains(cond, "=")
	}
	return false
}
