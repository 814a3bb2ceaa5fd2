package arch

import (
	"slices"
	"testing"
)

func TestNamesAndCapabilities(t *testing.T) {
	for _, a := range All {
		if HasBatchNorm(a) && !NeedsImage(a) {
			t.Errorf("%s has BatchNorm but takes flat inputs", a)
		}
		if MinSide(a) > 0 && !NeedsImage(a) {
			t.Errorf("%s has a minimum side but takes flat inputs", a)
		}
	}
	if NeedsImage("resnet") || NeedsImage(MLP) || NeedsImage(LogReg) || !NeedsImage(CNN4) || HasBatchNorm(CNN4) || !HasBatchNorm(ResNet18ImageNet) {
		t.Error("capabilities wrong for a named architecture")
	}
	if !slices.Equal(Features, All) {
		t.Errorf("Features %v, want all of %v", Features, All)
	}
}

// The pooled side follows the layers by hand: cnn4 on 28×28 → conv 24 → pool 12 → conv 8
// → pool 4; on 32×32 → 28 → 14 → 10 → 5; fedavgcnn keeps the size through its convolutions.
func TestPooledSide(t *testing.T) {
	for _, c := range []struct {
		a          string
		side, want int
	}{{CNN4, 28, 4}, {CNN4, 32, 5}, {CNN4, 16, 1}, {FedAvgCNN, 28, 7}, {FedAvgCNN, 32, 8}, {FedAvgCNN, 4, 1}, {MLP, 28, 0}} {
		if got := PooledSide(c.a, c.side); got != c.want {
			t.Errorf("PooledSide(%s, %d) = %d, want %d", c.a, c.side, got, c.want)
		}
	}
	for _, a := range []string{CNN4, FedAvgCNN} {
		if s := PooledSide(a, MinSide(a)); s != 1 {
			t.Errorf("%s at its minimum side %d pools to %d, want 1", a, MinSide(a), s)
		}
	}
}

// Counts by hand: logreg 561·6+6; an MLP 20→16→8→10; cnn4 on 28×28×1 (4·4·64 into fc1);
// the ResNet estimate plus its classifier's weights.
func TestParamCount(t *testing.T) {
	for _, c := range []struct {
		a                       string
		dim                     float64
		side, channels, classes int
		hidden                  []int
		want                    float64
	}{
		{LogReg, 561, 0, 0, 6, nil, 561*6 + 6},
		{MLP, 20, 0, 0, 10, []int{16, 8}, 20*16 + 16 + 16*8 + 8 + 8*10 + 10},
		{CNN4, 784, 28, 1, 10, nil, 25*32 + 25*32*64 + 4*4*64*512 + 512*10},
		{FedAvgCNN, 3072, 32, 3, 10, nil, 25*3*32 + 25*32*64 + 8*8*64*512 + 512*10},
		{ResNet18, 3072, 32, 3, 100, nil, 11.2e6 + 512*100},
	} {
		if got := ParamCount(c.a, c.dim, c.side, c.channels, c.classes, c.hidden); got != c.want {
			t.Errorf("ParamCount(%s) = %v, want %v", c.a, got, c.want)
		}
	}
}
