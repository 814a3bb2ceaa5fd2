package model

import (
	"math"
	"slices"
	"testing"
)

// TestMixedGradientScaleOneIsGradient: with scale 1 and a zero offset, MixedGradient is
// Gradient's gradient, and on a network with BatchNorm it keeps the same new running
// statistics (BatchStats) — the batch's training-mode forward pass; with another scale and
// offset the gradient changes but the statistics, which only the forward pass of the
// parameters makes, do not.
func TestMixedGradientScaleOneIsGradient(t *testing.T) {
	spec, m := smallResNet(t)
	params := spec.Init(4)
	x := make([]float32, 5*6*6*3)
	for i := range x {
		x[i] = float32(math.Cos(0.21 * float64(i)))
	}
	y := []int32{0, 2, 1, 1, 0}
	g, err := m.Gradient(params, x, y)
	if err != nil {
		t.Fatal(err)
	}
	stats := slices.Clone(m.BatchStats())
	if len(stats) == 0 {
		t.Fatal("Gradient kept no running statistics")
	}
	near := func(a, b []float32) bool {
		for i := range a {
			if math.Abs(float64(a[i]-b[i])) > 1e-5*(1+math.Abs(float64(b[i]))) {
				return false
			}
		}
		return len(a) == len(b)
	}
	other := spec.Init(9) // a Gradient at other parameters leaves other statistics behind
	if _, err := m.Gradient(other, x, y); err != nil {
		t.Fatal(err)
	}
	mg, err := m.MixedGradient(params, x, y, 1, make([]float32, len(y)*3))
	if err != nil {
		t.Fatal(err)
	}
	for i := range g {
		if !near(mg[i].Data, g[i].Data) {
			t.Errorf("%s: the mixed gradient at scale 1, offset 0 is not the gradient", g[i].Name)
		}
	}
	offset := make([]float32, len(y)*3)
	for i := range offset {
		offset[i] = float32(i%3) - 1
	}
	for _, scale := range []float32{1, 0.3} {
		if _, err := m.Gradient(other, x, y); err != nil {
			t.Fatal(err)
		}
		if _, err := m.MixedGradient(params, x, y, scale, offset); err != nil {
			t.Fatal(err)
		}
		kept := m.BatchStats()
		if len(kept) != len(stats) {
			t.Fatalf("scale %v: %d running statistics kept, want %d", scale, len(kept), len(stats))
		}
		for i := range stats {
			if kept[i].Name != stats[i].Name || !near(kept[i].Data, stats[i].Data) {
				t.Errorf("scale %v: %s is not the forward pass's new statistic", scale, stats[i].Name)
			}
		}
	}
}

// TestTrainLogitsAreTrainingMode: on a network with BatchNorm, TrainLogits is the training
// pass's forward: the mean cross-entropy of its logits is FeatureGradient's loss (no
// penalty), its new running statistics are Gradient's, and the logits differ from the
// evaluation-mode ones Logits returns.
func TestTrainLogitsAreTrainingMode(t *testing.T) {
	spec, m := smallResNet(t)
	params := spec.Init(6)
	x := make([]float32, 4*6*6*3)
	for i := range x {
		x[i] = float32(math.Sin(0.13*float64(i))) + 0.5
	}
	y := []int32{2, 0, 1, 2}
	if _, err := m.Gradient(params, x, y); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(m.BatchStats())
	_, loss, _, err := m.FeatureGradient(params, x, y, make([]float32, 4*m.FeatureDim()), make([]float32, 4), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Gradient(spec.Init(9), x, y); err != nil { // other statistics behind
		t.Fatal(err)
	}
	logits, err := m.TrainLogits(params, x, y)
	if err != nil {
		t.Fatal(err)
	}
	ce := 0.0
	for i, label := range y {
		row := logits[i*3 : i*3+3]
		mx := float64(slices.Max(row))
		sum := 0.0
		for _, v := range row {
			sum += math.Exp(float64(v) - mx)
		}
		ce += mx + math.Log(sum) - float64(row[label])
	}
	if ce /= float64(len(y)); math.Abs(ce-float64(loss)) > 1e-5*(1+ce) {
		t.Errorf("mean cross-entropy of the logits %v, training loss %v", ce, loss)
	}
	got := m.BatchStats()
	for i := range want {
		if got[i].Name != want[i].Name || !slices.Equal(got[i].Data, want[i].Data) {
			t.Errorf("%s is not the training pass's new statistic", want[i].Name)
		}
	}
	eval, err := m.Logits(params, x, 4)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(eval, logits) {
		t.Error("training-mode logits equal the evaluation-mode ones: the test cannot tell them apart")
	}
}

// smallResNet compiles a ResNet-18 of width 2 on 6×6×3 inputs and 3 classes, closed when
// the test ends.
func smallResNet(t *testing.T) (ModelSpec, *Model) {
	t.Helper()
	spec := ModelSpec{Arch: ArchResNet18, InputShape: []int{6, 6, 3}, NumClasses: 3, Width: 2}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return spec, m
}
