package train

import (
	"context"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
)

func TestStateRoundTrip(t *testing.T) {
	w := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{1, -2, 3.5, 0}}}
	v := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{0, 0, 1, 1}}}
	run := &manifest.Run{Method: "fedselect", Options: map[string]string{"variant": "official"}}
	st := initState(t, run, w, 2)
	st.Round, st.Personal, st.Masks = 7, []tensor.List{w, v}, []tensor.List{v, nil}
	slot(t, st, "anchor").Set(1, w)
	slot(t, st, "local").Set(0, v)
	st.Metrics = []Metric{{Round: 5, Client: 1, Split: "test", Loss: 0.25, Accuracy: 0.5, Samples: 4}}
	st.Selection = []Selection{{Round: 7, Client: 0, Tensor: "fc.weight", Personalized: 2, Total: 4}}
	st.Comm = []Comm{{Round: 7, Client: 1, Down: 16, Up: 9}}
	st.Work = []Work{{Round: 7, Client: 1, Samples: 40, FLOPs: 1.5e9}}
	blobs, err := EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := blobs["aux/anchor/00001"]; !ok {
		t.Errorf("no blob aux/anchor/00001 among %v", keys(blobs))
	}
	if _, ok := blobs["aux/local/00000"]; !ok {
		t.Errorf("no blob aux/local/00000 among %v", keys(blobs))
	}
	if _, ok := blobs["aux/anchor/00000"]; ok {
		t.Error("client 0's unset anchor was stored")
	}
	back, err := DecodeState(blobs, 2, runMethod(t, run))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, st) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, st)
	}
	delete(blobs, "metrics")
	if _, err := DecodeState(blobs, 2, runMethod(t, run)); err == nil {
		t.Error("a checkpoint missing its metrics decoded")
	}
	// A state with no metrics yet (checkpoint before the first evaluation) encodes too.
	if _, err := EncodeState(&State{Round: 1, Global: w}); err != nil {
		t.Error(err)
	}
}

// TestMoveStateDrops: MoveState writes WriteState's blobs and leaves no personal model,
// mask or list of a slot that can drop it (here the clients' BatchNorm statistics) in the
// state.
func TestMoveStateDrops(t *testing.T) {
	w := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{1, -2, 3.5, 0}}}
	v := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{0, 0, 1, 1}}}
	run := &manifest.Run{Method: "fedselect", Options: map[string]string{"variant": "official"}}
	st := initState(t, run, w, 2)
	st.Round, st.Personal, st.Masks = 7, []tensor.List{w, v}, []tensor.List{v, nil}
	st.BN = []tensor.List{nil, v}
	want, err := EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	if err := MoveState(st, func(name string, b []byte) error { got[name] = b; return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MoveState wrote %v, WriteState %v", keys(got), keys(want))
	}
	for c := range 2 {
		if st.Personal[c] != nil || st.Masks[c] != nil || st.BN[c] != nil {
			t.Errorf("client %d's model, mask or BatchNorm statistics left in the state", c)
		}
	}
}

// TestCheckpointKeepsClientBatchNorm: a ResNet run with local BatchNorm statistics
// checkpoints each client's own statistics and resumes with them (and a method's own
// per-client state beside them: APFL's α, stored as the one-value tensors it always was).

func TestCheckpointKeepsClientBatchNorm(t *testing.T) {
	g := tensor.List{{Name: "bn1.running_mean", Shape: []int{2}, Data: []float32{0, 0}}}
	own := tensor.List{{Name: "bn1.running_mean", Shape: []int{2}, Data: []float32{0.5, -1}}}
	run := &manifest.Run{Method: "apfl", Params: map[string]float64{"alpha": 0.5}, Model: manifest.ModelSpec{Arch: "resnet18", BNStats: "local", BNParams: "shared"}}
	st := initState(t, run, g, 2)
	st.Round, st.Personal, st.BN = 3, []tensor.List{g, nil}, []tensor.List{nil, own}
	for c, a := range []float32{0.4, 0.6} {
		if err := slot(t, st, "alpha").Set(c, tensor.List{{Name: "alpha", Shape: []int{1}, Data: []float32{a}}}); err != nil {
			t.Fatal(err)
		}
	}
	blobs, err := EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	alpha, err := tensor.Decode(blobs["aux/alpha/00001"])
	if want := (tensor.List{{Name: "alpha", Shape: []int{1}, Data: []float32{0.6}}}); err != nil || !reflect.DeepEqual(alpha, want) {
		t.Errorf("aux/alpha/00001 holds %v (%v), want %v", alpha, err, want)
	}
	if _, ok := blobs["aux/bn/00001"]; !ok {
		t.Errorf("no blob aux/bn/00001 among %v", keys(blobs))
	}
	back, err := DecodeState(blobs, 2, runMethod(t, run))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.BN, st.BN) || !reflect.DeepEqual(back.Method, st.Method) {
		t.Errorf("per-client state after the round trip: %+v %+v, want %+v %+v", back.BN, back.Method, st.BN, st.Method)
	}
	if !PersonalModels(&manifest.Run{Method: "fedavg", Model: run.Model}) {
		t.Error("fedavg with local BatchNorm statistics should store a model per client")
	}
}

// initState is the state the run's method starts from with global as the initial model.
func initState(t *testing.T, r *manifest.Run, global tensor.List, clients int) *State {
	t.Helper()
	m, err := NewRunMethod(r)
	if err != nil {
		t.Fatal(err)
	}
	st := &State{Global: global}
	m.Init(st, clients)
	return st
}

// slot returns the state's checkpoint slot called name.
func slot(t *testing.T, st *State, name string) Slot {
	t.Helper()
	for _, s := range st.slots() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("the state has no slot %q", name)
	return Slot{}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Methods that carry state beyond the models (masks, weights, statistics, endpoints,
// APFL's α, FedOBP's score averages and deltas, FedSelect's growth anchors) resume bit-identically from a checkpoint that went through EncodeState and DecodeState.
func TestNewMethodsResumeThroughCheckpoints(t *testing.T) {
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Synthetic(data.SyntheticParams{Alpha: 0.5, Beta: 0.5, Devices: 6, Features: 60, Classes: 10})
	for _, c := range []struct {
		method  string
		params  map[string]float64
		options map[string]string
	}{
		{"lotteryfl", map[string]float64{"acc_threshold": 0}, nil},
		{"fedala", nil, nil},
		{"fedala", nil, map[string]string{"impl": "flbench"}},
		{"flute", nil, map[string]string{"impl": "flbench"}},
		{"fedpac", nil, nil},
		{"pfedfda", nil, nil},
		{"floco", map[string]float64{"tau": 2}, nil},
		{"flute", nil, nil},
		{"apfl", nil, nil},
		{"fedobp", map[string]float64{"q": 0.9, "ema": 0.5}, map[string]string{"score": "gradient"}},
		{"fedselect", map[string]float64{"grow_every": 1}, map[string]string{"variant": "official"}},
	} {
		r := &manifest.Run{MethodName: c.method, Method: c.method, Seed: 5, Dataset: manifest.DatasetSpec{Name: "synthetic"},
			Partition: manifest.PartitionSpec{Scheme: "natural", Clients: 6, TestFraction: 0.25},
			Model:     manifest.ModelSpec{Arch: "mlp", Hidden: []int{8}},
			Train: manifest.TrainSpec{Rounds: 4, Participation: 0.5, LocalEpochs: 1, BatchSize: 16, LR: 0.05,
				Momentum: 0.5, EvalEvery: 2, CheckpointEvery: 1},
		}
		r.Params, r.Options = manifest.DefaultParams(c.method)
		for k, v := range c.params {
			r.Params[k] = v
		}
		for k, v := range c.options {
			r.Options[k] = v
		}
		resumeEqualsUninterrupted(t, r, ds, backend)
	}
}

// resumeEqualsUninterrupted trains run r on ds with a checkpoint after every round, then
// resumes from each checkpoint after a trip through EncodeCheckpoint and DecodeState and checks
// that the final state encodes to the same bytes as the uninterrupted run's. It returns the
// number of checkpoints.
func resumeEqualsUninterrupted(t *testing.T, r *manifest.Run, ds *data.Dataset, backend string) int {
	t.Helper()
	a, err := partition.Make(ds, r.Dataset, r.Partition, r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	var blobs []map[string][]byte
	full, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend,
		Checkpoint: func(st *State) error {
			b, err := EncodeCheckpoint(st)
			blobs = append(blobs, b)
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := EncodeState(full)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range blobs {
		st, err := DecodeState(b, a.Clients(), runMethod(t, r))
		if err != nil {
			t.Fatal(err)
		}
		resumed, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend, Resume: st})
		if err != nil {
			t.Fatal(err)
		}
		got, err := EncodeState(resumed)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s resumed after round %d differs from the uninterrupted run", r.MethodName, i+1)
		}
	}
	return len(blobs)
}

// DM-PFL's and FedDST's state (global mask in State.Method, personal masks and weights, work rows)
// survives a checkpoint through the store's encoding: resuming from the decoded state after
// any round ends bit-identical to the uninterrupted run.
func TestSparseMethodsResumeThroughCheckpointEncoding(t *testing.T) {
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Synthetic(data.SyntheticParams{Alpha: 0.5, Beta: 0.5, Devices: 6, Features: 60, Classes: 10})
	for _, method := range []string{"dmpfl", "dmpfl_plus", "feddst"} {
		r := &manifest.Run{MethodName: method, Method: method, Seed: 3, Dataset: manifest.DatasetSpec{Name: "synthetic"},
			Partition: manifest.PartitionSpec{Scheme: "natural", Clients: 6, TestFraction: 0.25},
			Model:     manifest.ModelSpec{Arch: "logreg"},
			Train: manifest.TrainSpec{Rounds: 4, Participation: 0.5, LocalEpochs: 1, BatchSize: 16, LR: 0.05,
				EvalEvery: 2, CheckpointEvery: 1},
			Params:  map[string]float64{"sparsity": 0.5, "alpha_s": 0.1, "readjust_every": 1, "iterations": 1, "share_threshold": 0.3},
			Options: map[string]string{"base_entropy": "train"}}
		if n := resumeEqualsUninterrupted(t, r, ds, backend); n != 3 {
			t.Errorf("%s: %d checkpoints, want 3", method, n)
		}
	}
}
