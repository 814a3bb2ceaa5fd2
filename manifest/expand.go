package manifest

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/model/arch"
	"gopkg.in/yaml.v3"
)

// Run is one fully resolved experiment: one cell of the manifest's matrix.
type Run struct {
	// MethodName is the label from the manifest; Method the algorithm.
	MethodName string
	Method     string
	Seed       int64
	Dataset    DatasetSpec
	Partition  PartitionSpec
	Model      ModelSpec
	Train      TrainSpec
	// Params holds every numeric parameter of the method, defaults filled in.
	Params map[string]float64
	// Options holds every word-valued parameter of the method (ParamDef.IsWord).
	Options map[string]string
	// Vary lists the grid assignments that made this run, in grid order.
	Vary []Assignment
}

// PartitionSeed is the seed of the run's partition stage: partition.seed when set, else
// the run's seed.
func (r Run) PartitionSeed() int64 {
	if r.Partition.Seed != nil {
		return *r.Partition.Seed
	}
	return r.Seed
}

// Assignment is one grid choice: a field path and the value it took.
type Assignment struct {
	Path  string
	Value string
}

// Label names the run in progress lines and tables, e.g. "fedavg lr=0.1 seed=0".
func (r Run) Label() string {
	var b strings.Builder
	b.WriteString(r.MethodName)
	for _, a := range r.Vary {
		fmt.Fprintf(&b, " %s=%s", ShortPath(a.Path), a.Value)
	}
	fmt.Fprintf(&b, " seed=%d", r.Seed)
	return b.String()
}

// ShortPath names a grid path by its field, or by its section for a "name" field
// (dataset.name → dataset).
func ShortPath(path string) string {
	sec, field, _ := strings.Cut(path, ".")
	if field == "name" {
		return sec
	}
	return field
}

// Config returns the label without the seed: runs that differ only by seed share it.
func (r Run) Config() string {
	l := r.Label()
	return l[:strings.LastIndex(l, " seed=")]
}

type gridAxis struct {
	path   string
	values []*yaml.Node
	pos    *yaml.Node
}

// parseGrid reads a `grid:` mapping of field path → list of values.
func (m *Manifest) parseGrid(n *yaml.Node, field string, allowParams bool) ([]gridAxis, error) {
	if n == nil || n.Kind == 0 || n.Tag == "!!null" {
		return nil, nil
	}
	d := &decoder{file: m.File}
	if n.Kind != yaml.MappingNode {
		return nil, d.errf(n, field, "expected a mapping of field path to list of values, e.g. train.lr: [0.01, 0.1]")
	}
	var axes []gridAxis
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f := field + "." + k.Value
		if err := checkGridPath(d, k, f, allowParams); err != nil {
			return nil, err
		}
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return nil, d.errf(v, f, "expected a non-empty list of values")
		}
		axes = append(axes, gridAxis{path: k.Value, values: v.Content, pos: k})
	}
	return axes, nil
}

var gridSections = map[string]reflect.Type{
	"dataset":   reflect.TypeOf(DatasetSpec{}),
	"partition": reflect.TypeOf(PartitionSpec{}),
	"model":     reflect.TypeOf(ModelSpec{}),
	"train":     reflect.TypeOf(TrainSpec{}),
}

func checkGridPath(d *decoder, k *yaml.Node, field string, allowParams bool) error {
	sec, name, ok := strings.Cut(k.Value, ".")
	sections := []string{"dataset", "model", "partition", "train"}
	if allowParams {
		sections = append(sections, "params")
	}
	if !ok {
		return d.errf(k, field, "a grid path is section.field (sections: %s)", strings.Join(sections, ", "))
	}
	if sec == "params" && allowParams {
		return nil
	}
	t, known := gridSections[sec]
	if !known {
		msg := fmt.Sprintf("unknown section %q", sec)
		if near := nearest(sec, sections); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return d.errf(k, field, "%s", msg)
	}
	if fieldIndex(t, name) < 0 {
		msg := fmt.Sprintf("%s has no field %q", sec, name)
		if near := nearest(name, structKeys(t)); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return d.errf(k, field, "%s", msg)
	}
	return nil
}

// apply sets the field at path in r to the value in node v.
func (m *Manifest) apply(r *Run, def MethodDef, path string, v *yaml.Node, field string) error {
	d := &decoder{file: m.File}
	sec, name, _ := strings.Cut(path, ".")
	if sec == "params" {
		p, ok := def.param(name)
		if !ok {
			msg := fmt.Sprintf("method %s has no parameter %q", def.Name, name)
			if near := nearest(name, def.paramNames()); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			return d.errf(v, field, "%s", msg)
		}
		if p.IsWord() {
			var w string
			wv := reflect.ValueOf(&w).Elem()
			if err := d.decode(v, wv, field); err != nil {
				return err
			}
			if p.Choices != nil {
				if err := d.check(v, wv, "oneof="+strings.Join(p.Choices, "|"), field); err != nil {
					return err
				}
			}
			r.Options[name] = w
			return nil
		}
		var f float64
		fv := reflect.ValueOf(&f).Elem()
		if err := d.decode(v, fv, field); err != nil {
			return err
		}
		if err := d.check(v, fv, p.Check, field); err != nil {
			return err
		}
		r.Params[name] = f
		return nil
	}
	var target reflect.Value
	switch sec {
	case "dataset":
		target = reflect.ValueOf(&r.Dataset).Elem()
	case "partition":
		target = reflect.ValueOf(&r.Partition).Elem()
	case "model":
		target = reflect.ValueOf(&r.Model).Elem()
	case "train":
		target = reflect.ValueOf(&r.Train).Elem()
	}
	i := fieldIndex(target.Type(), name)
	if err := d.decode(v, target.Field(i), field); err != nil {
		return err
	}
	return d.check(v, target.Field(i), target.Type().Field(i).Tag.Get("check"), field)
}

// Expand resolves the manifest's matrix — methods × grid × method grid × seeds — into runs,
// in that nesting order, and checks each run's settings against each other.
func (m *Manifest) Expand() ([]Run, error) {
	top, err := m.parseGrid(&m.Grid, "grid", false)
	if err != nil {
		return nil, err
	}
	var runs []Run
	for i, ms := range m.Methods {
		f := fmt.Sprintf("methods[%d]", i)
		def, _ := LookupMethod(ms.Method)
		own, err := m.parseGrid(&ms.Grid, f+".grid", true)
		if err != nil {
			return nil, err
		}
		base := Run{MethodName: ms.Name, Method: ms.Method, Dataset: m.Dataset, Partition: m.Partition,
			Model: m.Model, Train: m.Train}
		base.Params, base.Options = def.Defaults()
		base.Model.Hidden = append([]int(nil), m.Model.Hidden...)
		names := make([]string, 0, len(ms.Params))
		for n := range ms.Params {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			node := ms.Params[n]
			if err := m.apply(&base, def, "params."+n, &node, f+".params."+n); err != nil {
				return nil, err
			}
		}
		axes := append(append([]gridAxis(nil), top...), own...)
		combos := 1
		for _, a := range axes {
			combos *= len(a.values)
		}
		for c := 0; c < combos; c++ {
			r := base
			r.Params = copyParams(base.Params)
			r.Options = copyParams(base.Options)
			r.Model.Hidden = append([]int(nil), base.Model.Hidden...)
			rem := c
			// Grid values first, then the method's train block, which wins for that method.
			idx := make([]int, len(axes))
			for j := len(axes) - 1; j >= 0; j-- {
				idx[j] = rem % len(axes[j].values)
				rem /= len(axes[j].values)
			}
			for j, a := range axes {
				v := a.values[idx[j]]
				field := "grid." + a.path
				if j >= len(top) {
					field = f + ".grid." + a.path
				}
				if err := m.apply(&r, def, a.path, v, field); err != nil {
					return nil, err
				}
				r.Vary = append(r.Vary, Assignment{Path: a.path, Value: v.Value})
			}
			if ms.Train.Kind != 0 {
				d := &decoder{file: m.File}
				if err := d.decode(&ms.Train, reflect.ValueOf(&r.Train).Elem(), f+".train"); err != nil {
					return nil, err
				}
			}
			for _, seed := range m.Seeds {
				rr := r
				rr.Seed = seed
				if err := m.checkRun(&rr, i); err != nil {
					return nil, err
				}
				runs = append(runs, rr)
			}
		}
	}
	return runs, nil
}

func copyParams[V any](p map[string]V) map[string]V {
	out := make(map[string]V, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// checkRun validates combinations of settings that no single field can.
func (m *Manifest) checkRun(r *Run, mi int) error {
	methodField := fmt.Sprintf("methods[%d]", mi)
	if err := m.checkData(r); err != nil {
		return err
	}
	if err := m.checkRunBounds(r, mi); err != nil {
		return err
	}
	if def, _ := LookupMethod(r.Method); def.Features && !slices.Contains(arch.Features, r.Model.Arch) {
		field := methodField + ".method"
		if _, set := m.Pos[field]; !set {
			field = methodField + ".name"
		}
		return m.ErrAt(field, "%s works on penultimate features, available for %s models only, not %s",
			r.Method, strings.Join(arch.Features, ", "), r.Model.Arch)
	}
	p := &r.Partition
	if p.Scheme == "shards" && p.SamplesPerClient > 0 && p.SamplesPerClient < p.Shards {
		return m.ErrAt("partition.samples_per_client", "%d samples cannot fill %d shards", p.SamplesPerClient, p.Shards)
	}
	if p.TestSource == "official" && (p.Scheme != "shards" || (p.ShardMode != "class_pure" && p.ShardMode != "official")) {
		return m.ErrAt("partition.test_source", "test_source official draws test sets by shard class: it needs scheme shards with shard_mode class_pure or official")
	}
	if p.Draw == "flbench" && (p.Scheme != "dirichlet" || p.BalanceCap != "false" || p.TestRounding != "floor") {
		return m.ErrAt("partition.draw", "draw flbench replays FL-bench's Dirichlet partition: it needs scheme dirichlet, balance_cap: false and test_rounding: floor, as FL-bench draws it")
	}
	if p.Draw == "flbench" && (r.PartitionSeed() < 0 || r.PartitionSeed() > math.MaxUint32) {
		field := "partition.seed"
		if _, set := m.Pos[field]; !set {
			field = "seeds"
		}
		return m.ErrAt(field, "draw flbench seeds numpy with the partition seed: %d is outside [0, 2^32)", r.PartitionSeed())
	}
	classPure := p.Scheme == "shards" && (p.ShardMode == "class_pure" || p.ShardMode == "official")
	if p.Population != 0 && (!classPure || p.Population < p.Clients) {
		return m.ErrAt("partition.population", "population %d draws the %d clients from that many users partitioned: it needs scheme shards with shard_mode class_pure or official, and at least partition.clients users", p.Population, p.Clients)
	}
	if p.ShardTake == "official" && !classPure {
		return m.ErrAt("partition.shard_take", "shard_take official cuts class-pure shards: it needs scheme shards with shard_mode class_pure or official")
	}
	return nil
}

// FormatFloat renders a number the way keys and labels do: shortest round-trip form.
func FormatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
