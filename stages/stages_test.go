package stages

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

func TestStateRoundTrip(t *testing.T) {
	w := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{1, -2, 3.5, 0}}}
	v := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{0, 0, 1, 1}}}
	st := &train.State{Round: 7, Global: w, Personal: []tensor.List{w, v},
		Masks:     []tensor.List{v, nil},
		Aux:       map[string][]tensor.List{"anchor": {nil, w}, "local": {v, nil}},
		Metrics:   []train.Metric{{Round: 5, Client: 1, Split: "test", Loss: 0.25, Accuracy: 0.5, Samples: 4}},
		Selection: []train.Selection{{Round: 7, Client: 0, Tensor: "fc.weight", Personalized: 2, Total: 4}},
		Comm:      []train.Comm{{Round: 7, Client: 1, Down: 16, Up: 9}},
		Work:      []train.Work{{Round: 7, Client: 1, Samples: 40, FLOPs: 1.5e9}}}
	blobs, err := encodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	run := &manifest.Run{Method: "fedselect", Options: map[string]string{"variant": "official"}}
	back, err := decodeState(blobs, 2, run)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, st) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, st)
	}
	delete(blobs, "metrics")
	if _, err := decodeState(blobs, 2, run); err == nil {
		t.Error("a checkpoint missing its metrics decoded")
	}
	// A state with no metrics yet (checkpoint before the first evaluation) encodes too.
	if _, err := encodeState(&train.State{Round: 1, Global: w}); err != nil {
		t.Error(err)
	}
}
