package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model/arch"
)

func TestKeyCanonicalization(t *testing.T) {
	type p struct {
		LR  float64        `json:"lr"`
		Map map[string]any `json:"m"`
	}
	a, _, err := computeKey(manifest.KindTrain, p{LR: 1e-3, Map: map[string]any{"b": 1, "a": 2}}, nil, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := computeKey(manifest.KindTrain, p{LR: 0.001, Map: map[string]any{"a": 2, "b": 1.0}}, nil, "cpu")
	if a != b {
		t.Error("1e-3 and 0.001 (and map order, 1 vs 1.0) must give the same key")
	}
	for name, other := range map[string]func() (Key, []byte, error){
		"param": func() (Key, []byte, error) { return computeKey(manifest.KindTrain, p{LR: 0.002}, nil, "cpu") },
		"kind": func() (Key, []byte, error) {
			return computeKey(manifest.KindEvaluate, p{LR: 0.001, Map: map[string]any{"a": 2, "b": 1}}, nil, "cpu")
		},
		"backend": func() (Key, []byte, error) {
			return computeKey(manifest.KindTrain, p{LR: 0.001, Map: map[string]any{"a": 2, "b": 1}}, nil, "xla")
		},
		"input": func() (Key, []byte, error) {
			return computeKey(manifest.KindTrain, p{LR: 0.001, Map: map[string]any{"a": 2, "b": 1}}, []Key{{1}}, "cpu")
		},
	} {
		k, _, _ := other()
		if k == a {
			t.Errorf("changing the %s did not change the key", name)
		}
	}
	old := CodeVersions[manifest.KindTrain]
	CodeVersions[manifest.KindTrain] = old + 1
	c, _, _ := computeKey(manifest.KindTrain, p{LR: 0.001, Map: map[string]any{"a": 2, "b": 1}}, nil, "cpu")
	CodeVersions[manifest.KindTrain] = old
	if c == a {
		t.Error("bumping the stage code version did not change the key")
	}
}

func TestDiffDescriptorsNamesChangedField(t *testing.T) {
	type p struct {
		Train map[string]any `json:"train"`
	}
	_, a, _ := computeKey(manifest.KindTrain, p{Train: map[string]any{"lr": 0.01, "rounds": 5}}, nil, "cpu")
	_, b, _ := computeKey(manifest.KindTrain, p{Train: map[string]any{"lr": 0.05, "rounds": 5}}, nil, "cpu")
	d := DiffDescriptors(a, b)
	if len(d) != 1 || !strings.Contains(d[0], "train.lr 0.01 → 0.05") {
		t.Errorf("diff = %q", d)
	}
}

// TestModelInitKeyedByContent: model.init's SHA-256 enters the train key, its path does
// not; a missing file is invalid input naming model.init.
func TestModelInitKeyedByContent(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trainKey := func(init string) (Key, error) {
		src := "name: k\ndataset: {name: synthetic}\nmodel: {arch: mlp, init: " + init + "}\nmethods: [{name: fedavg}]\n"
		m, err := manifest.ParseManifest("k.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		g, err := Build(m, BuildOptions{Backend: "cpu", Describe: func(manifest.DatasetSpec) (*manifest.DataDesc, error) {
			return &manifest.DataDesc{Digest: "d", Shape: []int{60}, Classes: 10, Samples: 100}, nil
		}})
		if err != nil {
			return Key{}, err
		}
		for _, n := range g.Nodes {
			if n.Kind == manifest.KindTrain {
				return n.Key, nil
			}
		}
		t.Fatal("no train stage")
		return Key{}, nil
	}
	a, err := trainKey(write("a.safetensors", "weights one"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := trainKey(write("b.safetensors", "weights one"))
	c, _ := trainKey(write("c.safetensors", "weights two"))
	if a != b {
		t.Error("the same content under another path changed the key")
	}
	if a == c {
		t.Error("other content did not change the key")
	}
	_, err = trainKey(filepath.Join(dir, "nope.safetensors"))
	if !manifest.IsInvalid(err) || !strings.Contains(err.Error(), "model.init") {
		t.Errorf("missing init file: error %v, want invalid input naming model.init", err)
	}
}

// specKeys maps each spec section to its key function and the base specs under which a
// field may enter the key (some fields are keyed only for one scheme or architecture).
func specKeys() map[string]struct {
	bases []any
	key   func(v any) any
} {
	desc := &manifest.DataDesc{Digest: "sha256:00", Shape: []int{28, 28, 1}, Classes: 10}
	var partitions, models []any
	for _, s := range []string{"dirichlet", "shards", "iid", "natural", "pathological", "domain"} {
		partitions = append(partitions, manifest.PartitionSpec{Scheme: s})
	}
	for _, a := range []string{"cnn4", "fedavgcnn", "resnet18", "resnet18_imagenet", "mlp", "logreg"} {
		models = append(models, manifest.ModelSpec{Arch: a})
	}
	return map[string]struct {
		bases []any
		key   func(v any) any
	}{
		"dataset": {[]any{manifest.DatasetSpec{Name: "fmnist"}, manifest.DatasetSpec{Name: "synthetic"}},
			func(v any) any { return datasetKey(v.(manifest.DatasetSpec), desc) }},
		"partition": {partitions, func(v any) any { return partitionKey(v.(manifest.PartitionSpec)) }},
		"model":     {models, func(v any) any { return modelKey(v.(manifest.ModelSpec), desc, "") }},
		"train": {[]any{manifest.TrainSpec{}, manifest.TrainSpec{Augment: []string{"crop"}}},
			func(v any) any { return trainKey(v.(manifest.TrainSpec)) }},
		"shift": {[]any{manifest.ShiftSpec{}}, func(v any) any { return shiftParams{Shift: v.(manifest.ShiftSpec)} }},
	}
}

// otherValues returns values of a field's type that differ from cur: every choice of a
// oneof rule, else one changed value.
func otherValues(f reflect.StructField, cur reflect.Value) []reflect.Value {
	var choices []string
	for _, rule := range strings.Split(f.Tag.Get("check"), ",") {
		if c, ok := strings.CutPrefix(rule, "oneof="); ok {
			choices = strings.Split(c, "|")
		}
	}
	one := func(v any) []reflect.Value { return []reflect.Value{reflect.ValueOf(v).Convert(f.Type)} }
	switch f.Type.Kind() {
	case reflect.String:
		if choices == nil {
			return one(cur.String() + "x")
		}
		var out []reflect.Value
		for _, c := range choices {
			if c != cur.String() {
				out = append(out, one(c)...)
			}
		}
		return out
	case reflect.Int, reflect.Int64:
		return one(cur.Int() + 3)
	case reflect.Float64:
		return one(cur.Float() + 0.25)
	case reflect.Bool:
		return one(!cur.Bool())
	case reflect.Pointer: // an optional scalar: set it
		return []reflect.Value{reflect.New(f.Type.Elem())}
	case reflect.Slice:
		elem := map[reflect.Kind]any{reflect.Int: 7, reflect.Float64: 0.5, reflect.String: "x"}[f.Type.Elem().Kind()]
		if choices != nil {
			elem = choices[0]
		}
		s := reflect.Append(cur, reflect.ValueOf(elem).Convert(f.Type.Elem()))
		return []reflect.Value{s}
	}
	panic("otherValues: unhandled kind " + f.Type.Kind().String())
}

// keyedOutsideSpecKeys lists spec fields that enter a stage key through another parameter
// than their section's key function; a test pins each.
var keyedOutsideSpecKeys = map[string]string{
	"partition.seed": "partitionParams.Seed is Run.PartitionSeed (graph.go; TestPartitionSeedSharesThePartitionStage)",
}

// TestEverySpecFieldKeyedOrExcluded: every field of a spec that stage keys are built from
// either changes a key under some scheme/architecture or is listed in NotKeyed with a
// reason, and nothing in NotKeyed changes a key. A new field fails here until decided.
func TestEverySpecFieldKeyedOrExcluded(t *testing.T) {
	seen := map[string]bool{}
	for section, sk := range specKeys() {
		typ := reflect.TypeOf(sk.bases[0])
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			path := section + "." + name
			seen[path] = true
			keyed := false
			for _, base := range sk.bases {
				before, err := canonicalJSON(sk.key(base))
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range otherValues(f, reflect.ValueOf(base).Field(i)) {
					mod := reflect.New(typ).Elem()
					mod.Set(reflect.ValueOf(base))
					mod.Field(i).Set(v)
					after, err := canonicalJSON(sk.key(mod.Interface()))
					if err != nil {
						t.Fatal(err)
					}
					if string(after) != string(before) {
						keyed = true
					}
				}
			}
			reason, excluded := NotKeyed[path]
			if _, ok := keyedOutsideSpecKeys[path]; ok && !excluded {
				if keyed {
					t.Errorf("%s is in keyedOutsideSpecKeys but changes its section's key", path)
				}
				continue
			}
			switch {
			case !keyed && !excluded:
				t.Errorf("%s changes no stage key and is not in NotKeyed: key it (keys.go) or list it with the reason", path)
			case keyed && excluded:
				t.Errorf("%s is in NotKeyed (%q) but changes a key", path, reason)
			case excluded && reason == "":
				t.Errorf("%s is in NotKeyed without a reason", path)
			}
		}
	}
	for path := range NotKeyed {
		if !seen[path] {
			t.Errorf("NotKeyed lists %s, which is no spec field", path)
		}
	}
}

// TestMethodRevisionKeyed: a method's own revision (manifest.MethodDef.Revision) enters
// its train stage's key only when it is above 0, so that methods never revised keep their
// keys, and a revised method's stale result names the revision.
func TestMethodRevisionKeyed(t *testing.T) {
	manifest.RegisterMethod(manifest.MethodDef{Name: "pipeline-test-rev0", Doc: "test"})
	manifest.RegisterMethod(manifest.MethodDef{Name: "pipeline-test-rev3", Doc: "test", Revision: 3})
	descOf := func(method string) []byte {
		return trainDesc(t, syntheticGraph(t, "name: k\ndataset: {name: synthetic}\nmodel: {arch: mlp}\nmethods: [{name: "+method+"}]\n"))
	}
	if d := descOf("pipeline-test-rev0"); strings.Contains(string(d), "revision") {
		t.Errorf("revision 0 is keyed: %s", d)
	}
	d3 := descOf("pipeline-test-rev3")
	if !strings.Contains(string(d3), `"revision":3`) {
		t.Errorf("revision 3 is not keyed: %s", d3)
	}
	p := trainParams{Method: "m", Params: map[string]float64{}}
	k0, b0, _ := computeKey(manifest.KindTrain, p, nil, "cpu")
	p.Revision = 1
	k1, b1, _ := computeKey(manifest.KindTrain, p, nil, "cpu")
	if k0 == k1 {
		t.Error("a revision did not change the key")
	}
	if d := DiffDescriptors(b0, b1); len(d) != 1 || !strings.Contains(d[0], "revision") {
		t.Errorf("diff = %q, want one phrase naming the revision", d)
	}
}

// A method's revision for one value of a word parameter enters the train key of the runs
// with that value only: pFedFDA's impl=paper revision leaves its impl flbench results
// current.
func TestMethodOptionRevisionKeyedForThatValueOnly(t *testing.T) {
	descOf := func(impl string) string {
		return string(trainDesc(t, syntheticGraph(t, "name: k\ndataset: {name: synthetic}\nmodel: {arch: mlp}\nmethods: [{name: pfedfda, params: {impl: "+impl+"}}]\n")))
	}
	d, _ := manifest.LookupMethod("pfedfda")
	rev := d.OptionRevisions["impl=paper"]
	if rev == 0 {
		t.Fatal("pfedfda has no impl=paper revision: the case is not exercised")
	}
	if got := descOf("flbench"); strings.Contains(got, "option_revisions") {
		t.Errorf("impl flbench keys the impl=paper revision: %s", got)
	}
	if got := descOf("paper"); !strings.Contains(got, fmt.Sprintf(`"option_revisions":{"impl=paper":%d}`, rev)) {
		t.Errorf("impl paper does not key its revision %d: %s", rev, got)
	}
}

// TestMethodBNRevisionKeyedForBatchNormModelsOnly: a method's BatchNorm revision enters
// the train key of a run on a ResNet-18 and no other, so its results on cnn4 stay current.
func TestMethodBNRevisionKeyedForBatchNormModelsOnly(t *testing.T) {
	manifest.RegisterMethod(manifest.MethodDef{Name: "pipeline-test-bnrev2", Doc: "test", BNRevision: 2})
	descOf := func(arch string) string {
		g := describedGraph(t, "name: k\ndataset: {name: fmnist}\nmodel: {arch: "+arch+"}\nmethods: [{name: pipeline-test-bnrev2}]\n",
			manifest.DataDesc{Digest: "d", Shape: []int{28, 28, 1}, Classes: 10, Samples: 100})
		return string(trainDesc(t, g))
	}
	if d := descOf("cnn4"); strings.Contains(d, "bn_revision") {
		t.Errorf("cnn4 keys the BatchNorm revision: %s", d)
	}
	if d := descOf("resnet18"); !strings.Contains(d, `"bn_revision":2`) || strings.Contains(d, `"revision"`) {
		t.Errorf("resnet18: want the BatchNorm revision 2 keyed alone: %s", d)
	}
}

// syntheticGraph builds the graph of the manifest src on a synthetic dataset's description
// (60 features, 10 classes, 100 samples) for the backend "cpu", failing t on an error.
func syntheticGraph(t *testing.T, src string) *Graph {
	t.Helper()
	return describedGraph(t, src, manifest.DataDesc{Digest: "d", Shape: []int{60}, Classes: 10, Samples: 100})
}

// describedGraph builds the graph of the manifest src, its dataset described by desc, for
// the backend "cpu", failing t on an error.
func describedGraph(t *testing.T, src string, desc manifest.DataDesc) *Graph {
	t.Helper()
	m, err := manifest.ParseManifest("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Build(m, BuildOptions{Backend: "cpu", Describe: func(manifest.DatasetSpec) (*manifest.DataDesc, error) {
		d := desc
		return &d, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// trainDesc is the key descriptor of g's (first) train stage.
func trainDesc(t *testing.T, g *Graph) []byte {
	t.Helper()
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindTrain {
			return n.desc
		}
	}
	t.Fatal("no train stage")
	return nil
}

// TestArchRevisionKeyedForThatArchOnly: an architecture's revision (arch.Revisions) enters
// the train key of runs on that architecture alone, so cnn4's kept results stay current
// when fedavgcnn's computation changes, and a bump names itself as the reason.
func TestArchRevisionKeyedForThatArchOnly(t *testing.T) {
	desc := manifest.DataDesc{Digest: "d", Shape: []int{28, 28, 1}, Classes: 10, Samples: 100}
	descOf := func(a string) []byte {
		return trainDesc(t, describedGraph(t, "name: k\ndataset: {name: fmnist}\nmodel: {arch: "+a+"}\nmethods: [{name: fedavg}]\n", desc))
	}
	rev := arch.Revisions[arch.FedAvgCNN]
	if rev == 0 {
		t.Fatal("fedavgcnn has no revision: the case is not exercised")
	}
	if d := descOf("fedavgcnn"); !strings.Contains(string(d), fmt.Sprintf(`"arch_revision":%d`, rev)) {
		t.Errorf("fedavgcnn does not key its revision %d: %s", rev, d)
	}
	if d := descOf("cnn4"); strings.Contains(string(d), "arch_revision") {
		t.Errorf("cnn4 keys an architecture revision: %s", d)
	}
	before := descOf("fedavgcnn")
	arch.Revisions[arch.FedAvgCNN] = rev + 1
	defer func() { arch.Revisions[arch.FedAvgCNN] = rev }()
	after := descOf("fedavgcnn")
	want := fmt.Sprintf("model.arch_revision %d → %d", rev, rev+1)
	if d := DiffDescriptors(before, after); len(d) != 1 || d[0] != want {
		t.Errorf("diff = %q, want [%q]", d, want)
	}
}

// A long text that changed (the report's description under an override) is named with what
// changed, not printed whole twice.
func TestDiffDescriptorsNamesALongTextChangeOnce(t *testing.T) {
	desc := "Synthetic(0.5, 0.5), 20 devices, each its own client; a one-hidden-layer MLP; FedAvg vs Local over 20 rounds."
	with := desc + "\n\nWith overrides: `-S train.rounds=30` (the description above is the file's, before them)."
	a, _ := json.Marshal(map[string]any{"params": map[string]any{"description": desc}})
	b, _ := json.Marshal(map[string]any{"params": map[string]any{"description": with}})
	d := DiffDescriptors(a, b)
	if len(d) != 1 || strings.Count(d[0], "one-hidden-layer") != 0 || !strings.Contains(d[0], "description changed: adds \"With overrides: `-S train.rounds=30`") {
		t.Errorf("diff %q", d)
	}
	b, _ = json.Marshal(map[string]any{"params": map[string]any{"description": strings.Replace(desc, "20 rounds", "40 rounds", 1)}})
	if d := DiffDescriptors(a, b); len(d) != 1 || !strings.Contains(d[0], `changed: "20 rounds." → "40 rounds."`) {
		t.Errorf("diff %q", d)
	}
}
