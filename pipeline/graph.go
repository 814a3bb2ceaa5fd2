package pipeline

import (
	"fmt"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/osfile"
	"github.com/fedpipe/fedpipe/manifest"
)

// Node is one stage of the DAG.
type Node struct {
	Kind string
	// Name identifies the stage within its manifest, e.g. "train fedavg lr=0.1 seed=0".
	Name string
	// Params is everything besides Inputs that the stage's outputs depend on; its
	// canonical JSON is part of the key.
	Params any
	// Inputs are the stages whose outputs this one reads, in the order the key hashes
	// them (InputKinds). An input is named by its stage kind: ask for it with Input or
	// InputsOf, never by its position.
	Inputs []*Node
	// Backend identifies the numeric backend for stages that compute with it ("" if none).
	Backend string
	// manifest.Run is the matrix cell the stage belongs to (nil for the report).
	Run *manifest.Run
	// Also lists the cells of other method labels whose settings are identical to Run's:
	// they share this stage (and its cached result) and are reported under their own
	// labels.
	Also []*manifest.Run
	// Data describes the run's dataset (nil for the report).
	Data *manifest.DataDesc
	// Runs lists every run the report covers (report only).
	Runs []*manifest.Run

	Key  Key
	desc []byte
}

// Description is the canonical JSON hashed into n's key (kind, code version, parameters,
// inputs' keys, backend), as Build computed it: what a kept result's index entry records,
// and what DiffDescriptors compares. The caller must not modify it.
func (n *Node) Description() []byte { return n.desc }

// InputKinds names, for each stage kind with inputs, its inputs by their stage kinds in
// the order its key hashes them: that order is part of every key and never changes. A
// report's inputs are every evaluate stage (one per run, in run order) and then every
// shift stage.
var InputKinds = map[string][]string{
	manifest.KindTrain:    {manifest.KindPartition},
	manifest.KindEvaluate: {manifest.KindTrain, manifest.KindPartition},
	manifest.KindShift:    {manifest.KindTrain, manifest.KindPartition},
	manifest.KindReport:   {manifest.KindEvaluate, manifest.KindShift},
}

// inputs lays out a stage's inputs, given by kind, in the order InputKinds says its key
// hashes them.
func inputs(kind string, byKind map[string][]*Node) []*Node {
	var out []*Node
	for _, k := range InputKinds[kind] {
		out = append(out, byKind[k]...)
	}
	return out
}

// Input returns n's input stage of kind (a train stage's partition; an evaluate or
// shift stage's train stage or partition), nil when it has none; the first of them for a
// report's evaluations (InputsOf lists them all).
func (n *Node) Input(kind string) *Node {
	for _, in := range n.Inputs {
		if in.Kind == kind {
			return in
		}
	}
	return nil
}

// InputsOf lists n's input stages of kind, in key order (a report's evaluations, one per
// run, a stage shared by two runs' labels once per run).
func (n *Node) InputsOf(kind string) []*Node {
	var out []*Node
	for _, in := range n.Inputs {
		if in.Kind == kind {
			out = append(out, in)
		}
	}
	return out
}

// Graph is a DAG of stages in dependency order: every node comes after its inputs.
type Graph struct {
	Manifest *manifest.Manifest
	Nodes    []*Node
}

// BuildOptions supplies what the graph cannot know by itself.
type BuildOptions struct {
	// Describe finds a dataset and describes it (digest, shape). Its errors should name
	// the path searched and how to install the data.
	Describe func(manifest.DatasetSpec) (*manifest.DataDesc, error)
	// Backend identifies the numeric backend (see model.BackendID).
	Backend string
	// ShiftFiles finds the real corrupted files a shift block names for a run whose
	// dataset has them (manifest.DatasetDef.RealCorruptions: CIFAR-10-C for CIFAR-10,
	// named by shift.cifar10c and shift.cifar10c_path), checks them against the run's
	// dataset and returns their digest, which enters the shift stage's key. Its errors
	// should name the paths searched and how to get the files. Needed only when a
	// manifest names such files; the data loader provides it (data.Loader.ShiftFiles).
	ShiftFiles func(manifest.ShiftSpec, manifest.DatasetSpec) (string, error)
	// CheckInit checks a run's model.init file against the run's model on the described
	// data (train.CheckInit), so a file that does not fit is refused with the manifest,
	// before any store exists. Nil skips the check; Build calls it once per file and model.
	CheckInit func(*manifest.Run, *manifest.DataDesc) error
}

// Build expands the manifest and returns its stage graph with every key computed.
// Stages shared by several runs (a partition used by every method) appear once.
func Build(m *manifest.Manifest, opt BuildOptions) (*Graph, error) {
	runs, err := m.Expand()
	if err != nil {
		return nil, err
	}
	g := &Graph{Manifest: m}
	byKey := map[Key]*Node{}
	add := func(n *Node) (*Node, error) {
		var inputs []Key
		for _, in := range n.Inputs {
			inputs = append(inputs, in.Key)
		}
		k, desc, err := computeKey(n.Kind, n.Params, inputs, n.Backend)
		if err != nil {
			return nil, err
		}
		if old, ok := byKey[k]; ok {
			return old, nil
		}
		n.Key, n.desc = k, desc
		byKey[k] = n
		g.Nodes = append(g.Nodes, n)
		return n, nil
	}
	descs := map[string]*manifest.DataDesc{}
	c10c := map[string]string{}  // dataset key → digest of the CIFAR-10-C files
	inits := map[string]string{} // model.init path → digest
	checked := map[string]bool{} // model.init path and model checked by opt.CheckInit
	var evals, shifts []*Node
	var reportRuns []*manifest.Run
	for i := range runs {
		r := &runs[i]
		// Every field of the spec: a synthetic dataset's alpha, beta and devices change
		// the data, and so its digest, as much as a file variant does.
		dk := fmt.Sprintf("%#v", r.Dataset)
		d, ok := descs[dk]
		if !ok {
			if d, err = opt.Describe(r.Dataset); err != nil {
				if manifest.IsInvalid(err) {
					field := "dataset.name"
					if _, set := m.Pos["dataset.path"]; set {
						field = "dataset.path"
					}
					return nil, m.ErrAt(field, "%v", err)
				}
				return nil, err
			}
			descs[dk] = d
		}
		part, err := add(&Node{Kind: manifest.KindPartition, Name: "partition " + partitionLabel(r), Run: r, Data: d,
			Params: partitionParams{Dataset: datasetKey(r.Dataset, d), Partition: partitionKey(r.Partition), Seed: r.PartitionSeed()}})
		if err != nil {
			return nil, err
		}
		initDigest, ok := inits[r.Model.Init]
		if !ok && r.Model.Init != "" {
			if initDigest, err = osfile.SHA256(r.Model.Init); err != nil {
				return nil, m.ErrAt("model.init", "cannot read the initial weights: %v (give the path of a safetensors file, relative to the working directory)", err)
			}
			inits[r.Model.Init] = initDigest
		}
		if err := checkInit(m, opt, r, d, checked); err != nil {
			return nil, err
		}
		train, err := add(&Node{Kind: manifest.KindTrain, Name: "train " + r.Label(), Run: r, Data: d,
			Inputs:  inputs(manifest.KindTrain, map[string][]*Node{manifest.KindPartition: {part}}),
			Backend: opt.Backend,
			Params: trainParams{Model: modelKey(r.Model, d, initDigest), Train: trainKey(r.Train), Method: r.Method,
				Revision: methodRevision(r.Method), BNRevision: methodBNRevision(r), OptionRevisions: methodOptionRevisions(r), Params: r.Params, Options: r.Options, Seed: r.Seed}})
		if err != nil {
			return nil, err
		}
		eval, err := add(&Node{Kind: manifest.KindEvaluate, Name: "evaluate " + r.Label(), Run: r, Data: d,
			Inputs:  inputs(manifest.KindEvaluate, map[string][]*Node{manifest.KindTrain: {train}, manifest.KindPartition: {part}}),
			Backend: opt.Backend,
			Params:  evaluateParams{Personal: personal(r)}})
		if err != nil {
			return nil, err
		}
		if eval.Run != r { // a duplicate cell
			if eval.Run.MethodName == r.MethodName {
				continue // the same label twice (a grid over an unkeyed field): one run
			}
			// Another label with identical settings: one shared stage, two runs, each
			// reported and verified under its own label.
			train.Also = append(train.Also, r)
			eval.Also = append(eval.Also, r)
			if sh := shiftOf(shifts, eval); sh != nil {
				sh.Also = append(sh.Also, r)
			}
			evals = append(evals, eval)
			reportRuns = append(reportRuns, r)
			continue
		}
		evals = append(evals, eval)
		reportRuns = append(reportRuns, r)
		if !m.Shift.Empty() {
			digest, ok := c10c[dk]
			if !ok && len(m.Shift.CIFAR10C) > 0 {
				if digest, err = shiftFilesDigest(m, opt, r.Dataset); err != nil {
					return nil, err
				}
				c10c[dk] = digest
			}
			sh, err := add(&Node{Kind: manifest.KindShift, Name: "shift " + r.Label(), Run: r, Data: d,
				Inputs:  inputs(manifest.KindShift, map[string][]*Node{manifest.KindTrain: {train}, manifest.KindPartition: {part}}),
				Backend: opt.Backend,
				Params:  shiftParams{Personal: personal(r), Shift: m.Shift, Seed: r.Seed, Files: digest}})
			if err != nil {
				return nil, err
			}
			shifts = append(shifts, sh)
		}
	}
	labels := make([]string, len(reportRuns))
	for i, r := range reportRuns {
		labels[i] = r.Label()
	}
	if _, err := add(&Node{Kind: manifest.KindReport, Name: "report", Runs: reportRuns,
		Inputs: inputs(manifest.KindReport, map[string][]*Node{manifest.KindEvaluate: evals, manifest.KindShift: shifts}),
		Params: reportParams{Manifest: m.Name, Runs: labels, Description: m.EffectiveDescription()}}); err != nil {
		return nil, err
	}
	return g, nil
}

// checkInit runs opt.CheckInit on r's model.init file once per file and model (the
// model's key fields and data shape), and names the manifest's model.init in its error.
func checkInit(m *manifest.Manifest, opt BuildOptions, r *manifest.Run, d *manifest.DataDesc, checked map[string]bool) error {
	if opt.CheckInit == nil || r.Model.Init == "" {
		return nil
	}
	k := fmt.Sprintf("%s\x00%#v\x00%v\x00%d", r.Model.Init, r.Model, d.Shape, d.Classes)
	if checked[k] {
		return nil
	}
	if err := opt.CheckInit(r, d); err != nil {
		if !manifest.IsInvalid(err) {
			return err
		}
		// The loader's message already says "invalid input: model.init: "; ErrAt says
		// where and which field.
		msg := strings.TrimPrefix(err.Error(), manifest.ErrInvalid.Error()+": ")
		return m.ErrAt("model.init", "%s", strings.TrimPrefix(msg, "model.init: "))
	}
	checked[k] = true
	return nil
}

// shiftOf returns the shift stage planned with eval's run, or nil.
func shiftOf(shifts []*Node, eval *Node) *Node {
	for _, sh := range shifts {
		if sh.Run == eval.Run {
			return sh
		}
	}
	return nil
}

// RunsOf returns the cells a stage serves: its own and those of identical other labels.
func (n *Node) RunsOf() []*manifest.Run {
	if n.Run == nil {
		return nil
	}
	return append([]*manifest.Run{n.Run}, n.Also...)
}

// shiftFilesDigest finds and checks the real corrupted files of the shift block for a run
// on dataset ds; an input error names shift.cifar10c_path when set, else shift.cifar10c.
func shiftFilesDigest(m *manifest.Manifest, opt BuildOptions, ds manifest.DatasetSpec) (string, error) {
	if opt.ShiftFiles == nil {
		return "", m.ErrAt("shift.cifar10c", "this command cannot read CIFAR-10-C files")
	}
	digest, err := opt.ShiftFiles(m.Shift, ds)
	if err != nil {
		if manifest.IsInvalid(err) {
			field := "shift.cifar10c"
			if _, set := m.Pos["shift.cifar10c_path"]; set {
				field = "shift.cifar10c_path"
			}
			return "", m.ErrAt(field, "%v", err)
		}
		return "", err
	}
	return digest, nil
}

// PartitionSetting says whether a swept manifest path (a Run's Vary) is a setting of the
// partition stage, which the runs that differ only in other settings share.
func PartitionSetting(path string) bool {
	return strings.HasPrefix(path, "dataset.") || strings.HasPrefix(path, "partition.")
}

// partitionLabel names a partition by the grid choices that shape it and its seed (the
// partition seed: partition.seed when set).
func partitionLabel(r *manifest.Run) string {
	var parts []string
	for _, a := range r.Vary {
		if PartitionSetting(a.Path) {
			parts = append(parts, manifest.ShortPath(a.Path)+"="+a.Value)
		}
	}
	parts = append(parts, fmt.Sprintf("seed=%d", r.PartitionSeed()))
	return strings.Join(parts, " ")
}

// personal reports whether the run's method ends with a model per client
// (manifest.MethodDef.Personal).
func personal(r *manifest.Run) bool {
	def, _ := manifest.LookupMethod(r.Method)
	return def.Personal
}
