package model

import (
	"fmt"
	"math"
	"reflect"
	"testing"
)

// sampleSquareSums is SquaredGradientSum's reference: the squares of SampleGradients'
// per-sample gradients (Gradient of each sample alone), summed in float64.
func sampleSquareSums(t *testing.T, m *Model, spec ModelSpec, seed uint64, x []float32, y []int32) [][]float64 {
	t.Helper()
	want := make([][]float64, len(m.Names()))
	err := m.SampleGradients(spec.Init(seed), x, y, func(_, k int, g []float32) error {
		if want[k] == nil {
			want[k] = make([]float64, len(g))
		}
		for j, v := range g {
			want[k][j] += float64(v) * float64(v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// SquaredGradientSum equals the sum of the per-sample gradients' squares to float32
// rounding, for cnn4 and fedavgcnn (the batched graph, over more than one chunk with a
// ragged last one), an mlp, and a small ResNet-18 (sample by sample), and gives the same
// bits when run again.
func TestSquaredGradientSumMatchesSampleGradients(t *testing.T) {
	for _, tc := range []struct {
		spec ModelSpec
		n    int
	}{
		{ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}, fisherChunk + 7},
		{ModelSpec{Arch: ArchFedAvgCNN, InputShape: []int{12, 12, 3}, NumClasses: 5}, 2*fisherChunk + 1},
		{ModelSpec{Arch: ArchMLP, InputShape: []int{20}, NumClasses: 4, Hidden: []int{8}}, 5},
		{ModelSpec{Arch: ArchResNet18, InputShape: []int{6, 6, 3}, NumClasses: 3, Width: 2}, 3},
	} {
		t.Run(fmt.Sprint(tc.spec.Arch, tc.spec.InputShape), func(t *testing.T) {
			m, err := NewModel("", tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			size := m.sample
			x := make([]float32, tc.n*size)
			for i := range x {
				x[i] = float32(math.Sin(0.37*float64(i)) + 0.2)
			}
			y := make([]int32, tc.n)
			for i := range y {
				y[i] = int32((i * 7) % tc.spec.NumClasses)
			}
			const seed = 5
			want := sampleSquareSums(t, m, tc.spec, seed, x, y)
			got, err := m.SquaredGradientSum(tc.spec.Init(seed), x, y)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d tensors, want %d", len(got), len(want))
			}
			var scale float64
			for _, w := range want {
				for _, v := range w {
					scale = math.Max(scale, v)
				}
			}
			if scale == 0 {
				t.Fatal("all squared gradients are zero: the test checks nothing")
			}
			worst := 0.0
			for k, w := range want {
				if len(got[k]) != len(w) {
					t.Fatalf("%s: %d values, want %d", m.Names()[k], len(got[k]), len(w))
				}
				for j, v := range w {
					if v > 0 {
						worst = math.Max(worst, math.Abs(float64(got[k][j])-v)/v)
					}
					if d := math.Abs(float64(got[k][j]) - v); d > 2e-5*v+1e-7*scale {
						t.Fatalf("%s[%d] = %g, want %g (per-sample reference)", m.Names()[k], j, got[k][j], v)
					}
				}
			}
			t.Logf("largest relative difference from the reference: %.3g", worst)
			again, err := m.SquaredGradientSum(tc.spec.Init(seed), x, y)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, again) {
				t.Error("a second run gave other bits")
			}
			if c := m.Compilations()["sqgrad"]; m.batchedFisher() != (c == 1) {
				t.Errorf("compiled the batched graph %d times (batched %v)", c, m.batchedFisher())
			}
		})
	}
}

// GradientInto gives Gradient's bits in the buffers it is handed, and new ones when they
// do not fit.
func TestGradientIntoIsGradient(t *testing.T) {
	spec := ModelSpec{Arch: ArchMLP, InputShape: []int{5}, NumClasses: 3, Hidden: []int{4}}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	x := make([]float32, 3*5)
	for i := range x {
		x[i] = float32(math.Cos(0.7 * float64(i)))
	}
	y := []int32{0, 2, 1}
	into, err := m.GradientInto(nil, spec.Init(1), x, y)
	if err != nil {
		t.Fatal(err)
	}
	for _, params := range []uint64{1, 2} {
		want, err := m.Gradient(spec.Init(params), x, y)
		if err != nil {
			t.Fatal(err)
		}
		buf := &into[0].Data[0]
		got, err := m.GradientInto(into, spec.Init(params), x, y)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("params %d: not Gradient's bits", params)
		}
		if &got[0].Data[0] != buf {
			t.Error("the buffers handed in were not reused")
		}
	}
}
