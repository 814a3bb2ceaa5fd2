package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// oracleSpecs are the models whose training steps are compared between the default backend
// and the oracle.
var oracleSpecs = []ModelSpec{
	{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10},
	{Arch: ArchCNN4, InputShape: []int{32, 32, 3}, NumClasses: 10},
	{Arch: ArchMLP, InputShape: []int{7, 9}, Hidden: []int{33, 20}, NumClasses: 6},
}

// trainSteps runs steps SGD steps of spec on backend from spec.Init(seed) with fixed random
// batches of 32 (and one of 7), returning the losses and the final parameters.
func trainSteps(t *testing.T, backend string, spec ModelSpec, steps int) ([]float32, tensor.List) {
	t.Helper()
	m, err := NewModel(backend, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(spec.Init(3), SGD{LR: 0.05, Momentum: 0.7, WeightDecay: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(11, 12))
	var losses []float32
	for i := range steps {
		b := 32
		if i == steps-1 {
			b = 7
		}
		x, y := randomData(r, b, tensor.Size(spec.InputShape), spec.NumClasses)
		l, err := s.Step(x, y)
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, l)
	}
	p, err := s.Params()
	if err != nil {
		t.Fatal(err)
	}
	return losses, p
}

// TestDefaultBackendMatchesOracle trains each model a few steps on the default (fast) backend
// and on the oracle, and requires the same losses and parameters within 1e-4 relative
// (the GEMM sums in a different order, so the results are not bit-identical).
func TestDefaultBackendMatchesOracle(t *testing.T) {
	if CPUBackend == OracleBackend {
		t.Fatal("the default backend is the oracle")
	}
	for _, spec := range oracleSpecs {
		t.Run(fmt.Sprint(spec.Arch, spec.InputShape), func(t *testing.T) {
			const steps = 3
			fastLoss, fast := trainSteps(t, CPUBackend, spec, steps)
			refLoss, ref := trainSteps(t, OracleBackend, spec, steps)
			for i := range refLoss {
				if d := math.Abs(float64(fastLoss[i] - refLoss[i])); d > 1e-4*math.Abs(float64(refLoss[i])) {
					t.Errorf("step %d: loss %v, oracle %v", i, fastLoss[i], refLoss[i])
				}
			}
			identical := true
			for i := range ref {
				// Relative to the tensor's largest entry (individual entries may be near zero).
				scale := 0.0
				for _, v := range ref[i].Data {
					scale = max(scale, math.Abs(float64(v)))
				}
				for j, v := range ref[i].Data {
					got := fast[i].Data[j]
					identical = identical && got == v
					if d := math.Abs(float64(got - v)); d > 1e-4*scale {
						t.Fatalf("%s[%d] = %v, oracle %v (scale %v)", ref[i].Name, j, got, v, scale)
					}
				}
			}
			if identical && spec.Arch == ArchCNN4 {
				// The fast GEMM uses FMAs and a different summation order: identical results
				// would mean it is not in use.
				t.Errorf("parameters are bit-identical to the oracle's: is the fast backend used?")
			}
		})
	}
}

// envTrainDigest makes TestFastBackendThreadIndependence print a digest of trained
// parameters (run as a subprocess with a given GOMAXPROCS).
const envTrainDigest = "FEDPIPE_TEST_TRAIN_DIGEST"

// paramsDigest is an exact textual digest of parameters (hex of every float's bits, hashed
// by FNV-1a to keep it short) and of the losses.
func paramsDigest(losses []float32, p tensor.List) string {
	h := uint64(14695981039346656037)
	add := func(u uint32) {
		for range 4 {
			h ^= uint64(u & 0xff)
			h *= 1099511628211
			u >>= 8
		}
	}
	for _, l := range losses {
		add(math.Float32bits(l))
	}
	for _, tt := range p {
		for _, v := range tt.Data {
			add(math.Float32bits(v))
		}
	}
	return fmt.Sprintf("%016x", h)
}

func TestFastBackendThreadIndependence(t *testing.T) {
	spec := oracleSpecs[0]
	if os.Getenv(envTrainDigest) != "" {
		l, p := trainSteps(t, CPUBackend, spec, 3)
		fmt.Printf("DIGEST %d %s\n", runtime.GOMAXPROCS(0), paramsDigest(l, p))
		return
	}
	// Two runs in this process.
	l1, p1 := trainSteps(t, CPUBackend, spec, 3)
	l2, p2 := trainSteps(t, CPUBackend, spec, 3)
	d1, d2 := paramsDigest(l1, p1), paramsDigest(l2, p2)
	if d1 != d2 {
		t.Fatalf("two runs differ: %s vs %s", d1, d2)
	}
	// GOMAXPROCS 1, 2 and 3 in subprocesses.
	for _, procs := range []int{1, 2, 3} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestFastBackendThreadIndependence$")
		cmd.Env = append(os.Environ(), envTrainDigest+"=1", fmt.Sprintf("GOMAXPROCS=%d", procs), "GOMLX_BACKEND=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GOMAXPROCS=%d: %v\n%s", procs, err, out)
		}
		want := fmt.Sprintf("DIGEST %d %s", procs, d1)
		if !strings.Contains(string(out), want) {
			t.Fatalf("GOMAXPROCS=%d: want %q in output:\n%s", procs, want, out)
		}
	}
}
