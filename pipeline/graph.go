package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Node is one stage of the DAG.
type Node struct {
	Kind string
	// Name identifies the stage within its manifest, e.g. "train fedavg lr=0.1 seed=0".
	Name string
	// Params is everything besides Inputs that the stage's outputs depend on; its
	// canonical JSON is part of the key.
	Params any
	Inputs []*Node
	// Backend identifies the numeric backend for stages that compute with it ("" if none).
	Backend string
	// Run is the matrix cell the stage belongs to (nil for the report).
	Run *Run
	// Data describes the run's dataset (nil for the report).
	Data *DataDesc
	// Runs lists every run the report covers (report only).
	Runs []*Run

	Key  Key
	desc []byte
}

// DataDesc is what the graph needs to know of a dataset before any stage runs.
type DataDesc struct {
	// Digest identifies the data's content: the SHA-256 of the raw files, or of the
	// generator's version and parameters for synthetic data.
	Digest string
	// Shape is one sample's shape (NHWC without N for images).
	Shape []int
	// Classes is the number of labels.
	Classes int
	// Samples is the number of samples before any max_samples subset.
	Samples int
	// Source says where the data was found (a path), for messages; not part of keys.
	Source string
}

// Graph is a DAG of stages in dependency order: every node comes after its inputs.
type Graph struct {
	Manifest *Manifest
	Nodes    []*Node
}

// BuildOptions supplies what the graph cannot know by itself.
type BuildOptions struct {
	// Describe finds a dataset and describes it (digest, shape). Its errors should name
	// the path searched and how to install the data.
	Describe func(DatasetSpec) (*DataDesc, error)
	// Backend identifies the numeric backend (see model.BackendID).
	Backend string
	// CIFAR10C finds the real CIFAR-10-C files a shift block names (shift.cifar10c,
	// shift.cifar10c_path), checks them against the run's dataset (CIFAR-10, whose test
	// split they corrupt) and returns their digest, which enters the shift stage's key.
	// Its errors should name the paths searched and how to get the files. Needed only
	// when a manifest lists shift.cifar10c.
	CIFAR10C func(ShiftSpec, DatasetSpec) (string, error)
}

// Parameter sets hashed into keys. Only what changes a stage's outputs belongs here.
type partitionParams struct {
	Dataset   map[string]any `json:"dataset"`
	Partition map[string]any `json:"partition"`
	Seed      int64          `json:"seed"`
}

type trainParams struct {
	Model   map[string]any     `json:"model"`
	Train   map[string]any     `json:"train"`
	Method  string             `json:"method"`
	Params  map[string]float64 `json:"params"`
	Options map[string]string  `json:"options,omitempty"`
	Seed    int64              `json:"seed"`
}

type evaluateParams struct {
	Personal bool `json:"personal"`
}

type shiftParams struct {
	Personal bool      `json:"personal"`
	Shift    ShiftSpec `json:"shift"`
	Seed     int64     `json:"seed"`
	// CIFAR10C is the digest of the real CIFAR-10-C files (shift.cifar10c), so that
	// replacing a file reruns the stage; empty without them.
	CIFAR10C string `json:"cifar10c,omitempty"`
}

// CIFAR10CDigest returns the digest of the real CIFAR-10-C files a shift stage was
// planned with ("" for other stages or without shift.cifar10c).
func (n *Node) CIFAR10CDigest() string {
	if p, ok := n.Params.(shiftParams); ok {
		return p.CIFAR10C
	}
	return ""
}

type reportParams struct {
	Manifest string   `json:"manifest"`
	Runs     []string `json:"runs"`
}

// datasetKey returns the fields of the dataset spec that change the data.
func datasetKey(ds DatasetSpec, d *DataDesc) map[string]any {
	m := map[string]any{"name": ds.Name, "digest": d.Digest, "max_samples": ds.MaxSamples}
	if ds.Name == "synthetic" {
		m["alpha"], m["beta"], m["devices"], m["features"], m["classes"] = ds.Alpha, ds.Beta, ds.Devices, ds.Features, ds.Classes
	}
	// Fields added after key scheme 1 enter only when set, so existing keys stay valid.
	setIf(m, "variant", ds.Variant, ds.Variant != "")
	setIf(m, "severity", ds.Severity, ds.Severity != 0)
	setIf(m, "image_size", ds.ImageSize, ds.ImageSize != 0)
	setIf(m, "fraction", ds.Fraction, ds.Fraction != 0)
	setIf(m, "normalize", ds.Normalize, ds.Normalize != "" && ds.Normalize != "dataset")
	return m
}

// setIf sets m[k] = v when cond holds.
func setIf(m map[string]any, k string, v any, cond bool) {
	if cond {
		m[k] = v
	}
}

func partitionKey(p PartitionSpec) map[string]any {
	m := map[string]any{"scheme": p.Scheme, "clients": p.Clients, "test_fraction": p.TestFraction}
	switch p.Scheme {
	case "dirichlet":
		m["alpha"], m["min_samples"] = p.Alpha, p.MinSamples
	case "shards":
		m["shards"], m["samples_per_client"] = p.Shards, p.SamplesPerClient
	case "pathological":
		m["classes_per_client"], m["quantity_skew"] = p.ClassesPerClient, p.QuantitySkew
	case "natural":
		setIf(m, "min_samples", p.MinSamples, p.MinSamples != 10)
	}
	return m
}

// modelKey returns the model fields that change results; initDigest is the SHA-256 of
// model.init's file ("" without one): its content, not its path, enters the key.
func modelKey(ms ModelSpec, d *DataDesc, initDigest string) map[string]any {
	m := map[string]any{"arch": ms.Arch, "input": d.Shape, "classes": d.Classes}
	setIf(m, "init", "sha256:"+initDigest, initDigest != "")
	if ms.Arch == "mlp" {
		m["hidden"] = ms.Hidden
	}
	if ms.Arch == "resnet18" || ms.Arch == "resnet18_imagenet" {
		m["bn_stats"], m["bn_params"] = ms.BNStats, ms.BNParams
	}
	return m
}

func trainKey(t TrainSpec) map[string]any {
	m := map[string]any{"rounds": t.Rounds, "participation": t.Participation, "local_epochs": t.LocalEpochs,
		"batch_size": t.BatchSize, "lr": t.LR, "momentum": t.Momentum, "weight_decay": t.WeightDecay,
		"eval_every": t.EvalEvery, "finetune_epochs": t.FinetuneEpochs}
	if len(t.Augment) > 0 {
		m["augment"] = t.Augment
		setIf(m, "crop_padding", t.CropPadding, slices.Contains(t.Augment, "crop"))
	}
	return m
}

// Build expands the manifest and returns its stage graph with every key computed.
// Stages shared by several runs (a partition used by every method) appear once.
func Build(m *Manifest, opt BuildOptions) (*Graph, error) {
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
	descs := map[string]*DataDesc{}
	c10c := map[string]string{}  // dataset key → digest of the CIFAR-10-C files
	inits := map[string]string{} // model.init path → digest
	var evals, shifts []*Node
	var reportRuns []*Run
	for i := range runs {
		r := &runs[i]
		dk := fmt.Sprintf("%s|%s|%s|%d|%d|%s", r.Dataset.Name, r.Dataset.Path, r.Dataset.Variant, r.Dataset.Severity, r.Dataset.ImageSize, r.Dataset.Normalize)
		d, ok := descs[dk]
		if !ok {
			if d, err = opt.Describe(r.Dataset); err != nil {
				if IsInvalid(err) {
					field := "dataset.name"
					if _, set := m.Pos["dataset.path"]; set {
						field = "dataset.path"
					}
					return nil, m.errAt(field, "%v", err)
				}
				return nil, err
			}
			descs[dk] = d
		}
		part, err := add(&Node{Kind: KindPartition, Name: "partition " + partitionLabel(r), Run: r, Data: d,
			Params: partitionParams{Dataset: datasetKey(r.Dataset, d), Partition: partitionKey(r.Partition), Seed: r.Seed}})
		if err != nil {
			return nil, err
		}
		initDigest, ok := inits[r.Model.Init]
		if !ok && r.Model.Init != "" {
			if initDigest, err = fileSHA256(r.Model.Init); err != nil {
				return nil, m.errAt("model.init", "cannot read the initial weights: %v (give the path of a safetensors file, relative to the working directory)", err)
			}
			inits[r.Model.Init] = initDigest
		}
		train, err := add(&Node{Kind: KindTrain, Name: "train " + r.Label(), Run: r, Data: d, Inputs: []*Node{part},
			Backend: opt.Backend,
			Params: trainParams{Model: modelKey(r.Model, d, initDigest), Train: trainKey(r.Train), Method: r.Method,
				Params: r.Params, Options: r.Options, Seed: r.Seed}})
		if err != nil {
			return nil, err
		}
		eval, err := add(&Node{Kind: KindEvaluate, Name: "evaluate " + r.Label(), Run: r, Data: d,
			Inputs: []*Node{train, part}, Backend: opt.Backend,
			Params: evaluateParams{Personal: Methods[r.Method].Personal}})
		if err != nil {
			return nil, err
		}
		if eval.Run != r { // a duplicate cell
			continue
		}
		evals = append(evals, eval)
		reportRuns = append(reportRuns, r)
		if !m.Shift.Empty() {
			digest, ok := c10c[dk]
			if !ok && len(m.Shift.CIFAR10C) > 0 {
				if digest, err = m.cifar10cDigest(opt, r.Dataset); err != nil {
					return nil, err
				}
				c10c[dk] = digest
			}
			sh, err := add(&Node{Kind: KindShift, Name: "shift " + r.Label(), Run: r, Data: d,
				Inputs: []*Node{train, part}, Backend: opt.Backend,
				Params: shiftParams{Personal: Methods[r.Method].Personal, Shift: m.Shift, Seed: r.Seed, CIFAR10C: digest}})
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
	if _, err := add(&Node{Kind: KindReport, Name: "report", Inputs: append(evals, shifts...), Runs: reportRuns,
		Params: reportParams{Manifest: m.Name, Runs: labels}}); err != nil {
		return nil, err
	}
	return g, nil
}

// cifar10cDigest finds and checks the real CIFAR-10-C files of the shift block for a run
// on dataset ds; an input error names shift.cifar10c_path when set, else shift.cifar10c.
func (m *Manifest) cifar10cDigest(opt BuildOptions, ds DatasetSpec) (string, error) {
	if opt.CIFAR10C == nil {
		return "", m.errAt("shift.cifar10c", "this command cannot read CIFAR-10-C files")
	}
	digest, err := opt.CIFAR10C(m.Shift, ds)
	if err != nil {
		if IsInvalid(err) {
			field := "shift.cifar10c"
			if _, set := m.Pos["shift.cifar10c_path"]; set {
				field = "shift.cifar10c_path"
			}
			return "", m.errAt(field, "%v", err)
		}
		return "", err
	}
	return digest, nil
}

// partitionLabel names a partition by the grid choices that shape it and its seed.
func partitionLabel(r *Run) string {
	var parts []string
	for _, a := range r.Vary {
		if strings.HasPrefix(a.Path, "dataset.") || strings.HasPrefix(a.Path, "partition.") {
			parts = append(parts, shortPath(a.Path)+"="+a.Value)
		}
	}
	parts = append(parts, fmt.Sprintf("seed=%d", r.Seed))
	return strings.Join(parts, " ")
}

// fileSHA256 returns the hex SHA-256 of a file's content.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
