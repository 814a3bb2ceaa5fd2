package stages

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// TestCheckpointKeepsClientBatchNorm: a ResNet run with local BatchNorm statistics
// checkpoints each client's own statistics and resumes with them (and a method's own
// per-client slots beside them).
func TestCheckpointKeepsClientBatchNorm(t *testing.T) {
	g := tensor.List{{Name: "bn1.running_mean", Shape: []int{2}, Data: []float32{0, 0}}}
	own := tensor.List{{Name: "bn1.running_mean", Shape: []int{2}, Data: []float32{0.5, -1}}}
	st := &train.State{Round: 3, Global: g, Personal: []tensor.List{g, nil},
		Aux: map[string][]tensor.List{"bn": {nil, own}, "alpha": {
			{{Name: "alpha", Shape: []int{1}, Data: []float32{0.4}}}, {{Name: "alpha", Shape: []int{1}, Data: []float32{0.6}}}}}}
	blobs, err := encodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	run := &manifest.Run{Method: "apfl", Params: map[string]float64{"alpha": 0.5}, Model: manifest.ModelSpec{Arch: "resnet18", BNStats: "local", BNParams: "shared"}}
	back, err := decodeState(blobs, 2, run)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Aux, st.Aux) {
		t.Errorf("per-client tensors after the round trip: %+v, want %+v", back.Aux, st.Aux)
	}
	if !train.PersonalModels(&manifest.Run{Method: "fedavg", Model: run.Model}) {
		t.Error("fedavg with local BatchNorm statistics should store a model per client")
	}
}
