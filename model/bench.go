package model

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// BenchCNN4 measures the throughput of the cnn4 model on hw×hw×channels inputs with 10
// classes: training (SGD with momentum 0.7, like shared/bench/torch_cnn4.py) at the given
// batch size for steps steps after a warm-up, and inference (Evaluate) at batch 256. Inputs
// are fixed random normals; results are samples per second.
func BenchCNN4(backend string, hw, channels, batch, steps int) (trainSamplesPerSec, inferSamplesPerSec float64, err error) {
	return BenchModel(backend, ModelSpec{Arch: ArchCNN4, InputShape: []int{hw, hw, channels}, NumClasses: 10}, batch, steps)
}

// BenchModel is BenchCNN4 for any image model (spec.InputShape [H, W, C], 10 classes
// expected in spec.NumClasses).
func BenchModel(backend string, spec ModelSpec, batch, steps int) (trainSamplesPerSec, inferSamplesPerSec float64, err error) {
	if batch <= 0 || steps <= 0 {
		return 0, 0, fmt.Errorf("BenchModel: batch and steps must be positive, got %d and %d", batch, steps)
	}
	sample := 1
	for _, d := range spec.InputShape {
		sample *= d
	}
	m, err := NewModel(backend, spec)
	if err != nil {
		return 0, 0, err
	}
	defer m.Close()
	params := spec.Init(0)
	r := rand.New(rand.NewPCG(0, 1))
	s, err := m.NewSession(params, SGD{LR: 0.01, Momentum: 0.7})
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	x, y := randomData(r, batch, sample, spec.NumClasses)
	warmup := min(5, steps)
	if spec.Arch != ArchCNN4 {
		warmup = 1 // compiling is the slow part of the first step
	}
	for range warmup {
		if _, err := s.Step(x, y); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now()
	for range steps {
		if _, err := s.Step(x, y); err != nil {
			return 0, 0, err
		}
	}
	trainSamplesPerSec = float64(steps*batch) / time.Since(start).Seconds()

	const inferBatch = 256
	xi, yi := randomData(r, inferBatch, sample, spec.NumClasses)
	if _, _, err := m.Evaluate(params, xi, yi, inferBatch); err != nil { // Warm-up and compile.
		return 0, 0, err
	}
	inferRounds := max(1, steps/10)
	start = time.Now()
	for range inferRounds {
		if _, _, err := m.Evaluate(params, xi, yi, inferBatch); err != nil {
			return 0, 0, err
		}
	}
	inferSamplesPerSec = float64(inferRounds*inferBatch) / time.Since(start).Seconds()
	return trainSamplesPerSec, inferSamplesPerSec, nil
}

// randomData returns n samples of size standard-normal inputs and uniform labels in
// [0, classes), drawn from r (inputs first, then labels).
func randomData(r *rand.Rand, n, size, classes int) ([]float32, []int32) {
	x := make([]float32, n*size)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(r.IntN(classes))
	}
	return x, y
}
