package model

import (
	"math"
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// apflBatches are two batches of cnn4 inputs, of 4 and 3 samples: on fpfast the second
// runs padded in the first's graph.
func apflBatches() (xs [][]float32, ys [][]int32) {
	for b, n := range []int{4, 3} {
		x := make([]float32, n*28*28)
		for i := range x {
			x[i] = float32(math.Sin(0.011*float64(i)+float64(b))) * 0.7
		}
		xs = append(xs, x)
		ys = append(ys, []int32{int32(b), 3, 7, 9}[:n])
	}
	return xs, ys
}

// nearList reports the first entry of got off want by more than tol·(1 + |want|).
func nearList(t *testing.T, what string, got, want tensor.List, tol float64) {
	t.Helper()
	for i, w := range want {
		for j, x := range w.Data {
			if d := math.Abs(float64(got[i].Data[j] - x)); !(d <= tol*(1+math.Abs(float64(x)))) {
				t.Errorf("%s: %s[%d] = %v, want %v", what, w.Name, j, got[i].Data[j], x)
				return
			}
		}
	}
}

// TestAPFLSessionParamMix: two steps of the paper's step give w what Session.Step gives,
// bit for bit, and v and ⟨v − w, g⟩ what the mixture's Gradient gives, computed here.
func TestAPFLSessionParamMix(t *testing.T) {
	spec := ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	opt := SGD{LR: 0.05, Momentum: 0.7}
	w, v := spec.Init(1), spec.Init(2)
	ref, err := m.NewSession(w, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	s, err := m.NewAPFLSession(APFLParamMix, w, v, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	xs, ys := apflBatches()
	for b, alpha := range []float32{0.3, 0.8} {
		mixed := w.Clone()
		for i := range mixed {
			for j := range mixed[i].Data {
				mixed[i].Data[j] = alpha*v[i].Data[j] + (1-alpha)*w[i].Data[j]
			}
		}
		g, err := m.Gradient(mixed, xs[b], ys[b])
		if err != nil {
			t.Fatal(err)
		}
		want, dot := v.Clone(), 0.0
		for i := range want {
			for j := range want[i].Data {
				dot += float64(v[i].Data[j]-w[i].Data[j]) * float64(g[i].Data[j])
				want[i].Data[j] -= opt.LR * alpha * g[i].Data[j]
			}
		}
		got, err := s.Step(xs[b], ys[b], alpha, true)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-dot) > 1e-5*(1+math.Abs(dot)) {
			t.Errorf("step %d: <v - w, g> = %v, want %v", b, got, dot)
		}
		if _, err := ref.Step(xs[b], ys[b]); err != nil {
			t.Fatal(err)
		}
		if w, err = ref.Params(); err != nil {
			t.Fatal(err)
		}
		gotW, gotV, err := s.Params()
		if err != nil {
			t.Fatal(err)
		}
		for i := range w {
			if !slices.Equal(gotW[i].Data, w[i].Data) {
				t.Errorf("step %d: w's %s is not Session.Step's", b, w[i].Name)
			}
		}
		nearList(t, "v", gotV, want, 1e-6)
		v = gotV
	}
}

// TestAPFLSessionOutputMix: one step of FL-bench's step, against the same passes through
// Gradient, Logits and MixedGradient with the SGD steps and the α sum computed here.
func TestAPFLSessionOutputMix(t *testing.T) {
	spec := ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	opt := SGD{LR: 0.05, Momentum: 0.7, WeightDecay: 0.01}
	w, v := spec.Init(3), spec.Init(4)
	s, err := m.NewAPFLSession(APFLOutputMix, w, v, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	xs, ys := apflBatches()
	x, y := xs[1], ys[1]
	const alpha = 0.35
	gw, err := m.Gradient(w, x, y)
	if err != nil {
		t.Fatal(err)
	}
	bufW, bufV := w.Clone(), v.Clone()
	for i := range bufW {
		clear(bufW[i].Data)
		clear(bufV[i].Data)
	}
	step := func(theta, buf, g tensor.List) {
		for i := range theta {
			for j := range theta[i].Data {
				buf[i].Data[j] = opt.Momentum*buf[i].Data[j] + g[i].Data[j] + opt.WeightDecay*theta[i].Data[j]
				theta[i].Data[j] -= opt.LR * buf[i].Data[j]
			}
		}
	}
	w1 := w.Clone()
	step(w1, bufW, gw)
	logits, err := m.Logits(w1, x, len(y))
	if err != nil {
		t.Fatal(err)
	}
	for i := range logits {
		logits[i] *= 1 - alpha
	}
	gv, err := m.MixedGradient(v, x, y, alpha, logits)
	if err != nil {
		t.Fatal(err)
	}
	step(w1, bufW, gw)
	v1 := v.Clone()
	step(v1, bufV, gv)
	sum := 0.0
	for i := range v1 {
		for j := range v1[i].Data {
			sum += float64(v1[i].Data[j]-w1[i].Data[j]) * float64(alpha*gv[i].Data[j]+(1-alpha)*gw[i].Data[j])
		}
	}
	got, err := s.Step(x, y, alpha, true)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-sum) > 1e-5*(1+math.Abs(sum)) {
		t.Errorf("alpha's sum %v, want %v", got, sum)
	}
	gotW, gotV, err := s.Params()
	if err != nil {
		t.Fatal(err)
	}
	nearList(t, "w", gotW, w1, 1e-6)
	nearList(t, "v", gotV, v1, 1e-6)

	// Without the α term's sums the graph computes the same models, bit for bit.
	bare, err := m.NewAPFLSession(APFLOutputMix, w, v, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if got, err := bare.Step(x, y, alpha, false); err != nil || got != 0 {
		t.Fatalf("a step without sums returned %v, %v", got, err)
	}
	bareW, bareV, err := bare.Params()
	if err != nil {
		t.Fatal(err)
	}
	for i := range bareW {
		if !slices.Equal(bareW[i].Data, gotW[i].Data) || !slices.Equal(bareV[i].Data, gotV[i].Data) {
			t.Errorf("%s differs without the sums", bareW[i].Name)
		}
	}
}

// TestAPFLSessionErrors: an unknown variant, a batch of the wrong size and a closed
// session are errors.
func TestAPFLSessionErrors(t *testing.T) {
	spec := ModelSpec{Arch: ArchLogReg, InputShape: []int{2}, NumClasses: 2}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p := spec.Init(1)
	if _, err := m.NewAPFLSession(APFLVariant(7), p, p, SGD{LR: 0.1}); err == nil {
		t.Error("an unknown variant was accepted")
	}
	s, err := m.NewAPFLSession(APFLOutputMix, p, p, SGD{LR: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step([]float32{1, 2, 3}, []int32{0, 1}, 0.5, true); err == nil {
		t.Error("a batch of 3 values for 2 samples of 2 was accepted")
	}
	s.Close()
	if _, err := s.Step([]float32{1, 2}, []int32{0}, 0.5, true); err == nil {
		t.Error("a closed session stepped")
	}
	if _, _, err := s.Params(); err == nil {
		t.Error("a closed session returned parameters")
	}
}
