package data

import (
	"errors"
	"math"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// normalize: flbench applies FL-bench's constants to pixels in [0, 1]. By hand: FMNIST
// (mean 0.286, std 0.3205): white 255 → (1 − 0.286)/0.3205 = 2.2277691, black 0 →
// −0.286/0.3205 = −0.8923557 (fedpipe's default, 0.2860/0.3530, gives 2.0227 and
// −0.8102). OrganAMNIST (FL-bench's medmnistA, 118.7546/62.3489 on the 0–255 scale but
// applied after scaling to [0, 1]): 255 → (1 − 118.7546)/62.3489 = −1.8886396,
// 0 → −118.7546/62.3489 = −1.9046784.
func TestNormalizeFLBench(t *testing.T) {
	dir := t.TempDir()
	writeFMNIST(t, dir, 2, 1, false) // train images all 255, the test image all 0
	l := &Loader{}
	d, err := l.Load(manifest.DatasetSpec{Name: "fmnist", Path: dir, Normalize: "flbench"})
	if err != nil {
		t.Fatal(err)
	}
	near := func(got float32, want float64) bool { return math.Abs(float64(got)-want) < 1e-6 }
	if !near(d.Sample(0)[0], 2.2277691) || !near(d.Sample(2)[0], -0.8923557) {
		t.Errorf("fmnist flbench: white %v, black %v; want 2.2277691 and -0.8923557", d.Sample(0)[0], d.Sample(2)[0])
	}
	if d.PixelMean[0] != 0.286 || d.PixelStd[0] != 0.3205 {
		t.Errorf("fmnist flbench stats %v / %v, want 0.286 / 0.3205", d.PixelMean, d.PixelStd)
	}
	med := byteImageDataset("medmnist", []int{1, 2, 1}, 11, []byte{255, 0}, []int32{0}, 1, flbenchMode+"medmnistA", nil)
	if !near(med.Sample(0)[0], -1.8886396) || !near(med.Sample(0)[1], -1.9046784) {
		t.Errorf("organamnist flbench: %v, want [-1.8886396 -1.9046784]", med.Sample(0))
	}
	_, err = l.Load(manifest.DatasetSpec{Name: "medmnist", Variant: "organsmnist", Path: dir, Normalize: "flbench"})
	if !errors.Is(err, manifest.ErrInvalid) {
		t.Errorf("organsmnist flbench (no FL-bench constants): error %v, want invalid input", err)
	}
}
