package train

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
)

func TestStateRoundTrip(t *testing.T) {
	w := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{1, -2, 3.5, 0}}}
	v := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{0, 0, 1, 1}}}
	st := &State{Round: 7, Global: w, Personal: []tensor.List{w, v},
		Masks:     []tensor.List{v, nil},
		Method:    &fedSelectState{Anchor: []tensor.List{nil, w}},
		Metrics:   []Metric{{Round: 5, Client: 1, Split: "test", Loss: 0.25, Accuracy: 0.5, Samples: 4}},
		Selection: []Selection{{Round: 7, Client: 0, Tensor: "fc.weight", Personalized: 2, Total: 4}},
		Comm:      []Comm{{Round: 7, Client: 1, Down: 16, Up: 9}},
		Work:      []Work{{Round: 7, Client: 1, Samples: 40, FLOPs: 1.5e9}}}
	blobs, err := EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := blobs["aux/anchor/00001"]; !ok {
		t.Errorf("no blob aux/anchor/00001 among %v", keys(blobs))
	}
	run := &manifest.Run{Method: "fedselect", Options: map[string]string{"variant": "official"}}
	back, err := DecodeState(blobs, 2, run)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, st) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, st)
	}
	delete(blobs, "metrics")
	if _, err := DecodeState(blobs, 2, run); err == nil {
		t.Error("a checkpoint missing its metrics decoded")
	}
	// A state with no metrics yet (checkpoint before the first evaluation) encodes too.
	if _, err := EncodeState(&State{Round: 1, Global: w}); err != nil {
		t.Error(err)
	}
}

// TestCheckpointKeepsClientBatchNorm: a ResNet run with local BatchNorm statistics
// checkpoints each client's own statistics and resumes with them (and a method's own
// per-client state beside them: APFL's α, stored as the one-value tensors it always was).
func TestCheckpointKeepsClientBatchNorm(t *testing.T) {
	g := tensor.List{{Name: "bn1.running_mean", Shape: []int{2}, Data: []float32{0, 0}}}
	own := tensor.List{{Name: "bn1.running_mean", Shape: []int{2}, Data: []float32{0.5, -1}}}
	st := &State{Round: 3, Global: g, Personal: []tensor.List{g, nil},
		BN: []tensor.List{nil, own}, Method: &apflState{Alpha: []float32{0.4, 0.6}}}
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
	run := &manifest.Run{Method: "apfl", Params: map[string]float64{"alpha": 0.5}, Model: manifest.ModelSpec{Arch: "resnet18", BNStats: "local", BNParams: "shared"}}
	back, err := DecodeState(blobs, 2, run)
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

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
