package model

import (
	"math"
	"slices"
	"testing"
)

// TestGrayscaleRepeatedToThreeChannels: a ResNet-18 on one-channel images with
// InputChannels 3 has a three-channel stem, and its logits on a grayscale batch are those
// of the plain three-channel ResNet-18, with the same parameters, on the batch with each
// pixel's value copied into all three channels (FL-bench's broadcast_to). Without the
// option the stem takes one channel; the option is refused for other architectures and for
// data with two channels.
func TestGrayscaleRepeatedToThreeChannels(t *testing.T) {
	gray := ModelSpec{Arch: ArchResNet18ImageNet, InputShape: []int{9, 9, 1}, NumClasses: 3, Width: 2, InputChannels: 3}
	rgb := ModelSpec{Arch: ArchResNet18ImageNet, InputShape: []int{9, 9, 3}, NumClasses: 3, Width: 2}
	_, shapes, err := gray.ParamShapes()
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{7, 7, 3, 2}; !slices.Equal(shapes[0], want) {
		t.Fatalf("conv1.weight %v, want %v", shapes[0], want)
	}
	plain := gray
	plain.InputChannels = 0
	if _, shapes, _ := plain.ParamShapes(); shapes[0][2] != 1 {
		t.Errorf("without InputChannels the stem takes %d channels, want 1", shapes[0][2])
	}
	params := gray.Init(4)
	const b = 2
	x := make([]float32, b*9*9)
	x3 := make([]float32, 0, 3*len(x))
	for i := range x {
		x[i] = float32(math.Sin(1.3 * float64(i)))
		x3 = append(x3, x[i], x[i], x[i])
	}
	mg, err := NewModel("", gray)
	if err != nil {
		t.Fatal(err)
	}
	defer mg.Close()
	mc, err := NewModel("", rgb)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	lg, err := mg.Logits(params, x, b)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := mc.Logits(params, x3, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range lg {
		if math.Abs(float64(lg[i]-lc[i])) > 1e-5 {
			t.Errorf("logit %d: grayscale %v, three copies %v", i, lg[i], lc[i])
		}
	}
	for _, bad := range []ModelSpec{
		{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 3, InputChannels: 3},
		{Arch: ArchResNet18, InputShape: []int{8, 8, 2}, NumClasses: 3, Width: 2, InputChannels: 3},
	} {
		if bad.Validate() == nil {
			t.Errorf("%s on %v with InputChannels 3 accepted", bad.Arch, bad.InputShape)
		}
	}
}
