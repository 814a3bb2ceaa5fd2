package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model/arch"
)

// KeyScheme versions the way stage keys are computed. Changing the key layout or the
// canonical encoding must change it, so that no old cache entry is ever read as new.
const KeyScheme = "fedpipe-key/1"

// CodeVersions holds one constant per stage kind. Bump a kind's number whenever a change
// to its code changes its outputs: every cached result of that kind, in every store and
// in the kept results (reproduced/), is then stale and reports "stage code version N → N+1".
// A change that alters one method's outputs alone bumps that method's Revision,
// OptionRevisions or BNRevision (manifest.MethodDef) instead, so that other methods' results
// stay current. Why each number was bumped is in the commits that bumped it
// (git log -L '/^var CodeVersions/,/^}/:pipeline/keys.go').
var CodeVersions = map[string]int{
	manifest.KindPartition: 1,
	manifest.KindTrain:     7,
	manifest.KindEvaluate:  4,
	manifest.KindReport:    8,
	manifest.KindShift:     3,
}

// Key is a stage key: the SHA-256 of the stage's canonical description.
type Key [32]byte

func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Short is the first 12 hex digits, for display.
func (k Key) Short() string { return k.String()[:12] }

// descriptor is everything a stage's outputs depend on. Its canonical JSON is hashed into
// the key and kept in the store so that a later plan can say what changed.
type descriptor struct {
	Scheme  string          `json:"scheme"`
	Kind    string          `json:"kind"`
	Code    int             `json:"code"`
	Params  json.RawMessage `json:"params"`
	Inputs  []string        `json:"inputs"`
	Backend string          `json:"backend,omitempty"`
}

// canonicalJSON encodes v with sorted object keys and shortest round-trip numbers, so
// that equal values always give equal bytes (1e-3 and 0.001 decode to the same float64
// and encode the same).
func canonicalJSON(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	// Round-trip through a generic value: maps re-encode with sorted keys, numbers as
	// float64 in their shortest form.
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, err
	}
	return json.Marshal(g)
}

// computeKey derives a stage key and the descriptor bytes it hashes.
func computeKey(kind string, params any, inputs []Key, backend string) (Key, []byte, error) {
	code, ok := CodeVersions[kind]
	if !ok {
		return Key{}, nil, fmt.Errorf("pipeline: no code version for stage kind %q", kind)
	}
	p, err := canonicalJSON(params)
	if err != nil {
		return Key{}, nil, err
	}
	d := descriptor{Scheme: KeyScheme, Kind: kind, Code: code, Params: p, Backend: backend, Inputs: []string{}}
	for _, in := range inputs {
		d.Inputs = append(d.Inputs, in.String())
	}
	b, err := json.Marshal(d)
	if err != nil {
		return Key{}, nil, err
	}
	return Key(sha256.Sum256(b)), b, nil
}

// DiffDescriptors explains how a stage's current description (Node.Description) differs
// from the one it had when it last ran, as "field: old → new" phrases.
func DiffDescriptors(old, cur []byte) []string {
	var a, b map[string]any
	if json.Unmarshal(old, &a) != nil || json.Unmarshal(cur, &b) != nil {
		return nil
	}
	var out []string
	diffValue("", a, b, &out)
	return out
}

func diffValue(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			// The params object is the interesting part: name its fields directly.
			if path == "" && k == "params" {
				p = ""
			}
			diffValue(p, am[k], bm[k], out)
		}
		return
	}
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	if string(aj) == string(bj) {
		return
	}
	as, aStr := a.(string)
	bs, bStr := b.(string)
	// A long text of words (the report's description, not an id such as the backend's): what
	// changed, once, instead of both whole.
	if aStr && bStr && len(as)+len(bs) > 120 && strings.ContainsAny(as+bs, " \n") {
		*out = append(*out, path+" "+textChange(as, bs))
		return
	}
	switch path {
	case "inputs":
		*out = append(*out, "an input stage changed")
	case "code":
		*out = append(*out, fmt.Sprintf("stage code version %s → %s", aj, bj))
	default:
		if a == nil {
			aj = []byte("unset")
		}
		if b == nil {
			bj = []byte("unset")
		}
		*out = append(*out, fmt.Sprintf("%s %s → %s", path, aj, bj))
	}
}

// textChange says how long text a became b without quoting either whole: the part added or
// removed at the end, else the first 60 characters of each from where they differ.
func textChange(a, b string) string {
	clip := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		if r := []rune(s); len(r) > 60 {
			return string(r[:60]) + "…"
		}
		return s
	}
	switch {
	case strings.HasPrefix(b, a):
		return fmt.Sprintf("changed: adds %q", clip(b[len(a):]))
	case strings.HasPrefix(a, b):
		return fmt.Sprintf("changed: drops %q", clip(a[len(b):]))
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && i < len(a) && !utf8.RuneStart(a[i]) {
		i--
	}
	return fmt.Sprintf("changed: %q → %q", clip(a[i:]), clip(b[i:]))
}

// Parameter sets hashed into keys. Only what changes a stage's outputs belongs here.
type partitionParams struct {
	Dataset   map[string]any `json:"dataset"`
	Partition map[string]any `json:"partition"`
	Seed      int64          `json:"seed"`
}

type trainParams struct {
	Model  map[string]any `json:"model"`
	Train  map[string]any `json:"train"`
	Method string         `json:"method"`
	// Revision is the method's own code version (manifest.MethodDef.Revision; 0 unkeyed).
	Revision int `json:"revision,omitempty"`
	// BNRevision is the method's code version on models with BatchNorm
	// (manifest.MethodDef.BNRevision), keyed for such models only and only above 0.
	BNRevision int `json:"bn_revision,omitempty"`
	// OptionRevisions are the method's code versions for the run's word-parameter values
	// (manifest.MethodDef.OptionRevisions), the matching entries above 0 only.
	OptionRevisions map[string]int     `json:"option_revisions,omitempty"`
	Params          map[string]float64 `json:"params"`
	Options         map[string]string  `json:"options,omitempty"`
	Seed            int64              `json:"seed"`
}

type evaluateParams struct {
	Personal bool `json:"personal"`
}

type shiftParams struct {
	Personal bool               `json:"personal"`
	Shift    manifest.ShiftSpec `json:"shift"`
	Seed     int64              `json:"seed"`
	// Files is the digest of the real corrupted test files the shift block substitutes
	// (BuildOptions.ShiftFiles), so that replacing a file reruns the stage; empty without
	// them. Its JSON name is the one the first such files (shift.cifar10c) gave it, kept
	// because it is part of every such stage's key.
	Files string `json:"cifar10c,omitempty"`
}

// ShiftFilesDigest returns the digest of the real corrupted files a shift stage was
// planned with ("" for other stages or without them).
func (n *Node) ShiftFilesDigest() string {
	if p, ok := n.Params.(shiftParams); ok {
		return p.Files
	}
	return ""
}

type reportParams struct {
	Manifest string   `json:"manifest"`
	Runs     []string `json:"runs"`
	// Description is the manifest's description with its overrides (EffectiveDescription),
	// which report.md prints.
	Description string `json:"description,omitempty"`
}

// datasetKey returns the fields of the dataset spec that change the data: a generated
// dataset's parameters as well, the registered def says which (validation has refused a
// name no def is registered under).
func datasetKey(ds manifest.DatasetSpec, d *manifest.DataDesc) map[string]any {
	m := map[string]any{"name": ds.Name, "digest": d.Digest, "max_samples": ds.MaxSamples}
	if def, _ := manifest.LookupDataset(ds.Name); def.Generated {
		// A generated dataset is its parameters (DatasetDef.Generated).
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

func partitionKey(p manifest.PartitionSpec) map[string]any {
	m := map[string]any{"scheme": p.Scheme, "clients": p.Clients, "test_fraction": p.TestFraction}
	setIf(m, "test_rounding", p.TestRounding, p.TestRounding == "floor")
	switch p.Scheme {
	case "dirichlet":
		m["alpha"], m["min_samples"] = p.Alpha, p.MinSamples
		setIf(m, "balance_cap", false, p.BalanceCap == "false")
		setIf(m, "draw", p.Draw, p.Draw == "flbench")
	case "shards":
		m["shards"], m["samples_per_client"] = p.Shards, p.SamplesPerClient
		setIf(m, "shard_mode", p.ShardMode, p.ShardMode != "" && p.ShardMode != "random")
		setIf(m, "test_source", p.TestSource, p.TestSource == "official")
		setIf(m, "test_per_client", p.TestPerClient, p.TestPerClient != 0)
		setIf(m, "population", p.Population, p.Population > p.Clients)
		setIf(m, "shard_take", p.ShardTake, p.ShardTake == "official")
	case "pathological":
		m["classes_per_client"], m["quantity_skew"] = p.ClassesPerClient, p.QuantitySkew
		setIf(m, "class_draw", p.ClassDraw, p.ClassDraw == "random")
		setIf(m, "quantity_draw", p.QuantityDraw, p.QuantityDraw == "uniform")
	case "natural":
		setIf(m, "min_samples", p.MinSamples, p.MinSamples != 10)
	}
	return m
}

// modelKey returns the model fields that change results; initDigest is the SHA-256 of
// model.init's file ("" without one): its content, not its path, enters the key.
func modelKey(ms manifest.ModelSpec, d *manifest.DataDesc, initDigest string) map[string]any {
	m := map[string]any{"arch": ms.Arch, "input": d.Shape, "classes": d.Classes}
	setIf(m, "arch_revision", arch.Revisions[ms.Arch], arch.Revisions[ms.Arch] > 0)
	setIf(m, "init", "sha256:"+initDigest, initDigest != "")
	setIf(m, "input_channels", ms.InputChannels, ms.InputChannels != 0)
	if ms.Arch == arch.MLP {
		m["hidden"] = ms.Hidden
	}
	if ms.HasBatchNorm() {
		m["bn_stats"], m["bn_params"] = ms.BNStats, ms.BNParams
	}
	return m
}

func trainKey(t manifest.TrainSpec) map[string]any {
	m := map[string]any{"rounds": t.Rounds, "participation": t.Participation, "local_epochs": t.LocalEpochs,
		"batch_size": t.BatchSize, "lr": t.LR, "momentum": t.Momentum, "weight_decay": t.WeightDecay,
		"eval_every": t.EvalEvery, "finetune_epochs": t.FinetuneEpochs}
	if len(t.Augment) > 0 {
		m["augment"] = t.Augment
		setIf(m, "crop_padding", t.CropPadding, slices.Contains(t.Augment, "crop"))
	}
	setIf(m, "eval_train_split", true, t.EvalTrainSplit)
	return m
}

// NotKeyed lists every field of the specs that stage keys are made of (DatasetSpec,
// PartitionSpec, ModelSpec, TrainSpec, ShiftSpec) that deliberately enters no key, with
// the reason. Every other field must change some key (TestEverySpecFieldKeyedOrExcluded):
// adding a field forces a decision here or in the key maps above.
var NotKeyed = map[string]string{
	"dataset.path":           "where the files are, not what they hold: the files' SHA-256 (DataDesc.Digest) is keyed",
	"model.init":             "a path: the file's SHA-256 is keyed instead (modelKey's initDigest)",
	"train.checkpoint_every": "resume points never change results (resume is bit-identical)",
	"shift.cifar10c_path":    "a path: the CIFAR-10-C files' digest is keyed (shiftParams.Files)",
}

// methodRevision is the registered method's own code version (0 for an unknown name, which
// the manifest's validation has refused before a graph is built).
func methodRevision(name string) int {
	d, _ := manifest.LookupMethod(name)
	return d.Revision
}

// methodOptionRevisions are the run's method's code versions for the values of its word
// parameters the run has (nil when none is above 0).
func methodOptionRevisions(r *manifest.Run) map[string]int {
	d, _ := manifest.LookupMethod(r.Method)
	var out map[string]int
	for name, value := range r.Options {
		if v := d.OptionRevisions[name+"="+value]; v > 0 {
			if out == nil {
				out = map[string]int{}
			}
			out[name+"="+value] = v
		}
	}
	return out
}

// methodBNRevision is the run's method's code version on models with BatchNorm, for a run
// whose model has BatchNorm (0 otherwise, and for an unknown name).
func methodBNRevision(r *manifest.Run) int {
	if !r.Model.HasBatchNorm() {
		return 0
	}
	d, _ := manifest.LookupMethod(r.Method)
	return d.BNRevision
}
