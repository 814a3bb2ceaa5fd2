package train

import (
	"testing"

	"github.com/fedpipe/fedpipe/model"
)

func TestTrainFLOPsCNN4(t *testing.T) {
	spec := model.ModelSpec{Arch: "cnn4", InputShape: []int{28, 28, 1}, NumClasses: 10}
	// conv1 24·24·(5·5·1)·32, conv2 8·8·(5·5·32)·64, fc1 1024·512, classifier 512·10.
	macs := 24*24*25*32 + 8*8*25*32*64 + 1024*512 + 512*10
	got, err := TrainFLOPs(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := 6.0 * float64(macs); got != want || macs != 4267008 {
		t.Errorf("dense cnn4 training FLOPs per sample %v, want %v", got, want)
	}
	p := spec.Init(1)
	cls := p[p.Find("classifier.weight")].Data
	for j := 0; j < len(cls)/2; j++ {
		cls[j] = 0
	}
	got, err = TrainFLOPs(spec, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := 6.0 * float64(macs-512*10/2); got != want {
		t.Errorf("half-sparse classifier: %v FLOPs, want %v", got, want)
	}
}
