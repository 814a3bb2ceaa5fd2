package model

import (
	"math"
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/gomlx"
)

// TestFrozenBatchNormHandComputed checks BatchNorm in a training pass with frozen
// statistics (tape.frozenBN) against the formulas computed by hand in float64: the forward
// pass normalizes with the running statistics, y = γ·(x − μ)/√(σ² + ε) + β; the statistics
// come back unchanged; dβ = Σdy, dγ = Σdy·(x − μ)/√(σ² + ε) and dx = dy·γ/√(σ² + ε).
func TestFrozenBatchNormHandComputed(t *testing.T) {
	const n, c = 4, 2 // x is [2, 2, 1, 2]: 4 values per channel.
	x := []float64{0.3, -1.2, 2.0, 0.5, -0.7, 0.9, 1.1, -0.4}
	dy := []float64{0.2, -0.1, 0.4, 0.3, -0.6, 0.05, 0.1, 0.7}
	gamma, beta := []float64{1.5, -0.7}, []float64{0.2, 0.1}
	rm, rv := []float64{0.4, -0.3}, []float64{2.0, 0.5}
	// Channel 0: inv = 1/√2.00001 = 0.70710501; x − μ = −0.1, 1.6, −1.1, 0.7, so
	// y = 1.5·inv·(x − μ) + 0.2 = 0.0939342, 1.8970520, −0.9667233, 0.9424603.
	wantY0 := []float64{0.0939342, 1.8970520, -0.9667233, 0.9424603}
	wantY, wantDX := make([]float64, len(x)), make([]float64, len(x))
	var wantDG, wantDB [c]float64
	for ch := range c {
		inv := 1 / math.Sqrt(rv[ch]+1e-5)
		for i := range n {
			k := i*c + ch
			xhat := (x[k] - rm[ch]) * inv
			wantY[k] = gamma[ch]*xhat + beta[ch]
			wantDB[ch] += dy[k]
			wantDG[ch] += dy[k] * xhat
			wantDX[k] = dy[k] * gamma[ch] * inv
		}
	}
	for i, want := range wantY0 {
		if math.Abs(wantY[i*c]-want) > 1e-6 {
			t.Fatalf("hand value y[%d] = %.7f, the formula gives %.7f", i, want, wantY[i*c])
		}
	}

	backend, err := gomlx.Get("")
	if err != nil {
		t.Fatal(err)
	}
	exec, err := NewExec(backend, func(in []*Node) []*Node {
		tp := &tape{record: true, frozenBN: true}
		xv := &tv{n: in[0], needGrad: true}
		g, b := &tv{n: in[1], needGrad: true}, &tv{n: in[2], needGrad: true}
		y, m, v := tp.batchNorm(xv, g, b, in[3], in[4])
		y.g = in[5]
		tp.backward()
		return []*Node{y.n, m, v, xv.g, g.g, b.g}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(x, 2, 2, 1, c),
		tensors.FromFlatDataAndDimensions(gamma, c), tensors.FromFlatDataAndDimensions(beta, c),
		tensors.FromFlatDataAndDimensions(rm, c), tensors.FromFlatDataAndDimensions(rv, c),
		tensors.FromFlatDataAndDimensions(dy, 2, 2, 1, c))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]float64{wantY, rm, rv, wantDX, wantDG[:], wantDB[:]} {
		got := tensors.MustCopyFlatData[float64](outs[i])
		for j := range want {
			if math.Abs(got[j]-want[j]) > 1e-12 {
				t.Errorf("output %d [%d]: got %.15g, want %.15g", i, j, got[j], want[j])
			}
		}
	}
}

// TestFrozenBNSession trains a small ResNet-18 a few steps on its FrozenBN sibling: the
// running statistics stay exactly as they were, the trained tensors move, and each step's
// loss (taken before its update) equals the evaluation loss of the same batch at the same
// parameters — the forward pass is the evaluation one. The unfrozen model, from the same
// start, changes the statistics and its first loss differs from the evaluation loss.
func TestFrozenBNSession(t *testing.T) {
	spec := ModelSpec{Arch: ArchResNet18, InputShape: []int{6, 6, 3}, NumClasses: 3, Width: 2}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	fm, err := m.FrozenBN()
	if err != nil {
		t.Fatal(err)
	}
	if fm == m || !fm.Spec().FrozenBN {
		t.Fatal("FrozenBN returned the model itself for a network with BatchNorm")
	}
	if again, _ := m.FrozenBN(); again != fm {
		t.Error("FrozenBN made a second sibling")
	}
	params := spec.Init(3)
	// Statistics unlike the batch's, so that the two forward passes differ (yet mild
	// enough that the ReLUs leave every layer some gradient).
	for _, p := range params {
		switch {
		case strings.HasSuffix(p.Name, ".running_mean"):
			for i := range p.Data {
				p.Data[i] = 0.1*float32(i%3) - 0.1
			}
		case strings.HasSuffix(p.Name, ".running_var"):
			for i := range p.Data {
				p.Data[i] = 1.5 + 0.25*float32(i%2)
			}
		}
	}
	const b = 4
	x := make([]float32, b*6*6*3)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	y := []int32{0, 1, 2, 1}
	for _, frozen := range []bool{true, false} {
		model := m
		if frozen {
			model = fm
		}
		s, err := model.NewSession(params, SGD{LR: 0.1, Momentum: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		cur := params
		for step := range 3 {
			sum, _, err := model.Evaluate(cur, x, y, b)
			if err != nil {
				t.Fatal(err)
			}
			loss, err := s.Step(x, y)
			if err != nil {
				t.Fatal(err)
			}
			same := math.Abs(float64(loss)-sum/b) < 1e-5
			if frozen && !same {
				t.Errorf("frozen step %d: training loss %v, evaluation loss %v", step, loss, sum/b)
			}
			if !frozen && step == 0 && same {
				t.Errorf("train-mode step: training loss %v equals the evaluation loss", loss)
			}
			if cur, err = s.Params(); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		for i, p := range cur {
			unchanged := slices.Equal(p.Data, params[i].Data)
			switch {
			case IsRunningStat(p.Name) && unchanged != frozen:
				t.Errorf("frozen %v: %s unchanged = %v", frozen, p.Name, unchanged)
			case !IsRunningStat(p.Name) && unchanged:
				t.Errorf("frozen %v: %s did not train", frozen, p.Name)
			}
		}
	}
	plain, err := NewModel("", ModelSpec{Arch: ArchCNN4, InputShape: []int{16, 16, 1}, NumClasses: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if same, _ := plain.FrozenBN(); same != plain {
		t.Error("FrozenBN of a network without BatchNorm is not the model itself")
	}
}
