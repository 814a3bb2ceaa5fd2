package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// refLogReg computes, in float64, the per-sample losses, predictions and gradients of
// logistic regression (W [in, k], b [k]) on a batch.
func refLogReg(w, b []float32, in, k int, x []float32, y []int32) (losses []float64, preds []int, gw, gb []float64) {
	n := len(y)
	gw, gb = make([]float64, in*k), make([]float64, k)
	for s := range n {
		logits := make([]float64, k)
		for j := range k {
			logits[j] = float64(b[j])
			for i := range in {
				logits[j] += float64(x[s*in+i]) * float64(w[i*k+j])
			}
		}
		mx, arg := math.Inf(-1), 0
		for j, v := range logits {
			if v > mx {
				mx, arg = v, j
			}
		}
		sum := 0.0
		for _, v := range logits {
			sum += math.Exp(v - mx)
		}
		lse := mx + math.Log(sum)
		losses = append(losses, lse-logits[y[s]])
		preds = append(preds, arg)
		for j := range k {
			d := math.Exp(logits[j] - lse)
			if j == int(y[s]) {
				d--
			}
			d /= float64(n)
			gb[j] += d
			for i := range in {
				gw[i*k+j] += float64(x[s*in+i]) * d
			}
		}
	}
	return losses, preds, gw, gb
}

// TestSGDMatchesReference checks the optimizer (momentum, weight decay) and the loss
// against a plain-Go implementation of logistic regression, over several steps.
func TestSGDMatchesReference(t *testing.T) {
	const in, k, n = 5, 3, 8
	spec := ModelSpec{Arch: ArchLogReg, InputShape: []int{in}, NumClasses: k}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	params := spec.Init(1)
	opt := SGD{LR: 0.1, Momentum: 0.9, WeightDecay: 0.01}
	s, err := m.NewSession(params, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := append([]float32(nil), params[0].Data...)
	b := append([]float32(nil), params[1].Data...)
	bufW, bufB := make([]float64, len(w)), make([]float64, len(b))
	r := rand.New(rand.NewPCG(5, 6))
	for step := range 4 {
		x, y := randomData(r, n-step%2, in, k) // Also vary the batch size.
		losses, _, gw, gb := refLogReg(w, b, in, k, x, y)
		want := 0.0
		for _, l := range losses {
			want += l
		}
		want /= float64(len(y))
		got, err := s.Step(x, y)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(got)-want) > 1e-5 {
			t.Errorf("step %d: loss %v, want %v", step, got, want)
		}
		update := func(theta []float32, g, buf []float64) {
			for i := range theta {
				d := g[i] + float64(opt.WeightDecay)*float64(theta[i])
				buf[i] = float64(opt.Momentum)*buf[i] + d
				theta[i] = float32(float64(theta[i]) - float64(opt.LR)*buf[i])
			}
		}
		update(w, gw, bufW)
		update(b, gb, bufB)
	}
	got, err := s.Params()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]float32{w, b} {
		for j := range want {
			if d := math.Abs(float64(got[i].Data[j] - want[j])); d > 1e-5 {
				t.Fatalf("%s[%d] = %v, want %v", got[i].Name, j, got[i].Data[j], want[j])
			}
		}
	}
}

func TestEvaluateMatchesReference(t *testing.T) {
	const in, k, n = 4, 5, 23
	spec := ModelSpec{Arch: ArchLogReg, InputShape: []int{in}, NumClasses: k}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	params := spec.Init(3)
	x, y := randomData(rand.New(rand.NewPCG(1, 1)), n, in, k)
	losses, preds, _, _ := refLogReg(params[0].Data, params[1].Data, in, k, x, y)
	wantLoss, wantCorrect := 0.0, 0
	for i := range losses {
		wantLoss += losses[i]
		if preds[i] == int(y[i]) {
			wantCorrect++
		}
	}
	for _, batch := range []int{1, 7, 23, 100} {
		loss, correct, err := m.Evaluate(params, x, y, batch)
		if err != nil {
			t.Fatal(err)
		}
		if correct != wantCorrect || math.Abs(loss-wantLoss) > 1e-4 {
			t.Errorf("batch %d: (loss %v, correct %d), want (%v, %d)", batch, loss, correct, wantLoss, wantCorrect)
		}
	}
}

// toyImages makes a separable image problem: the class is the quadrant holding a bright
// 4×4 square, on a noisy background.
func toyImages(r *rand.Rand, n, hw int) ([]float32, []int32) {
	x := make([]float32, n*hw*hw)
	y := make([]int32, n)
	for s := range n {
		c := r.IntN(4)
		y[s] = int32(c)
		img := x[s*hw*hw : (s+1)*hw*hw]
		for i := range img {
			img[i] = float32(0.1 * r.NormFloat64())
		}
		half := hw / 2
		oy, ox := (c/2)*half+r.IntN(half-4+1), (c%2)*half+r.IntN(half-4+1)
		for i := range 4 {
			for j := range 4 {
				img[(oy+i)*hw+ox+j] = 1
			}
		}
	}
	return x, y
}

func TestTrainingLearnsToyProblems(t *testing.T) {
	cases := []struct {
		spec   ModelSpec
		opt    SGD
		epochs int
	}{
		{ModelSpec{Arch: ArchCNN4, InputShape: []int{16, 16, 1}, NumClasses: 4}, SGD{LR: 0.05, Momentum: 0.9}, 6},
		{ModelSpec{Arch: ArchMLP, InputShape: []int{16, 16, 1}, NumClasses: 4, Hidden: []int{64}}, SGD{LR: 0.05, Momentum: 0.9}, 10},
		{ModelSpec{Arch: ArchLogReg, InputShape: []int{16, 16, 1}, NumClasses: 4}, SGD{LR: 0.1, Momentum: 0.9, WeightDecay: 1e-4}, 10},
	}
	for _, tc := range cases {
		t.Run(tc.spec.Arch, func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, 12))
			const n, batch = 256, 32
			x, y := toyImages(r, n, 16)
			xt, yt := toyImages(r, 128, 16)
			m, err := NewModel("", tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			params := tc.spec.Init(1)
			startLoss, _, err := m.Evaluate(params, xt, yt, 64)
			if err != nil {
				t.Fatal(err)
			}
			s, err := m.NewSession(params, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for range tc.epochs {
				for start := 0; start < n; start += batch {
					if _, err := s.Step(x[start*256:(start+batch)*256], y[start:start+batch]); err != nil {
						t.Fatal(err)
					}
				}
			}
			trained, err := s.Params()
			if err != nil {
				t.Fatal(err)
			}
			loss, correct, err := m.Evaluate(trained, xt, yt, 64)
			if err != nil {
				t.Fatal(err)
			}
			acc := float64(correct) / float64(len(yt))
			t.Logf("%s: test loss %.3f → %.3f, accuracy %.3f", tc.spec.Arch, startLoss/128, loss/128, acc)
			if loss >= startLoss/2 || acc < 0.9 {
				t.Errorf("%s did not learn: test loss %.3f → %.3f, accuracy %.3f", tc.spec.Arch, startLoss/128, loss/128, acc)
			}
		})
	}
}

// TestDeterministic trains twice, with separately built models, and expects identical bits.
func TestDeterministic(t *testing.T) {
	spec := ModelSpec{Arch: ArchCNN4, InputShape: []int{20, 20, 2}, NumClasses: 5}
	run := func() (tensor.List, []float32) {
		m, err := NewModel("", spec)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		s, err := m.NewSession(spec.Init(9), SGD{LR: 0.05, Momentum: 0.5, WeightDecay: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r := rand.New(rand.NewPCG(2, 2))
		var losses []float32
		for _, b := range []int{16, 16, 16, 5} { // A smaller final batch too.
			x, y := randomData(r, b, 20*20*2, 5)
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
		return p, losses
	}
	p1, l1 := run()
	p2, l2 := run()
	for i := range l1 {
		if math.Float32bits(l1[i]) != math.Float32bits(l2[i]) {
			t.Errorf("step %d: losses %v and %v differ", i, l1[i], l2[i])
		}
	}
	init := spec.Init(9)
	for i := range p1 {
		changed := false
		for j := range p1[i].Data {
			if math.Float32bits(p1[i].Data[j]) != math.Float32bits(p2[i].Data[j]) {
				t.Fatalf("%s[%d]: %v vs %v", p1[i].Name, j, p1[i].Data[j], p2[i].Data[j])
			}
			changed = changed || p1[i].Data[j] != init[i].Data[j]
		}
		if !changed {
			t.Errorf("%s did not change during training", p1[i].Name)
		}
	}
}

func TestInputErrors(t *testing.T) {
	spec := ModelSpec{Arch: ArchLogReg, InputShape: []int{3}, NumClasses: 2}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	params := spec.Init(0)
	if _, err := m.NewSession(params[:1], SGD{}); err == nil || !strings.Contains(err.Error(), "want 2") {
		t.Errorf("missing tensor: %v", err)
	}
	bad := params.Clone()
	bad[0].Shape = []int{2, 3}
	if _, err := m.NewSession(bad, SGD{}); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("wrong shape: %v", err)
	}
	// Order does not matter: tensors are matched by name.
	s, err := m.NewSession(tensor.List{params[1], params[0]}, SGD{LR: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		x    []float32
		y    []int32
		want string
	}{
		{[]float32{1, 2}, []int32{0}, "input values"},
		{[]float32{1, 2, 3}, []int32{2}, "outside"},
		{nil, nil, "empty"},
	} {
		if _, err := s.Step(tc.x, tc.y); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Step(%v, %v): error %v, want %q", tc.x, tc.y, err, tc.want)
		}
	}
	if _, err := s.Step([]float32{1, 2, 3}, []int32{1}); err != nil {
		t.Errorf("a valid step after rejected inputs failed: %v", err)
	}
}

// A masked step moves only the entries whose mask is 1; an all-ones mask is bit-identical
// to an unmasked step.
func TestSessionMask(t *testing.T) {
	spec := ModelSpec{Arch: "mlp", InputShape: []int{6}, NumClasses: 3, Hidden: []int{5}}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	init := spec.Init(11)
	x := make([]float32, 4*6)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	y := []int32{0, 1, 2, 1}
	opt := SGD{LR: 0.1, Momentum: 0.9, WeightDecay: 0.01}
	run := func(mask tensor.List) tensor.List {
		s, err := m.NewSession(init, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.SetMask(mask); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if _, err := s.Step(x, y); err != nil {
				t.Fatal(err)
			}
		}
		p, err := s.Params()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := run(nil)
	ones := tensor.List{}
	half := tensor.List{}
	for _, p := range init {
		o, h := tensor.New(p.Name, p.Shape...), tensor.New(p.Name, p.Shape...)
		for i := range o.Data {
			o.Data[i] = 1
			h.Data[i] = float32(i % 2)
		}
		ones, half = append(ones, o), append(half, h)
	}
	if got := run(ones); !reflect.DeepEqual(got, plain) {
		t.Error("all-ones mask differs from no mask")
	}
	got := run(half)
	for ti, p := range got {
		for i, v := range p.Data {
			frozen := half[ti].Data[i] == 0
			if frozen && v != init[ti].Data[i] {
				t.Fatalf("%s[%d] is masked but moved", p.Name, i)
			}
			if !frozen && v != plain[ti].Data[i] && v == init[ti].Data[i] {
				t.Fatalf("%s[%d] is unmasked but did not move", p.Name, i)
			}
		}
	}
	s, _ := m.NewSession(init, opt)
	defer s.Close()
	if err := s.SetMask(tensor.List{{Name: "nope", Shape: []int{1}, Data: []float32{1}}}); err == nil {
		t.Error("mask naming an unknown parameter accepted")
	}
}

// Gradient agrees with one plain SGD step: θ' = θ − lr·g.
func TestGradientMatchesSGDStep(t *testing.T) {
	spec := ModelSpec{Arch: "mlp", InputShape: []int{6}, NumClasses: 3, Hidden: []int{5}}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	init := spec.Init(5)
	x := []float32{1, -2, 0.5, 3, 0, 1, 2, 2, -1, 0, 1, -3}
	y := []int32{2, 0}
	g, err := m.Gradient(init, x, y)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := m.NewSession(init, SGD{LR: 0.5})
	defer s.Close()
	if _, err := s.Step(x, y); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Params()
	for i := range g {
		for j, v := range g[i].Data {
			want := init[i].Data[j] - 0.5*v
			if d := math.Abs(float64(after[i].Data[j] - want)); d > 1e-6 {
				t.Fatalf("%s[%d]: step gave %v, θ − lr·g = %v", g[i].Name, j, after[i].Data[j], want)
			}
		}
	}
}

// A proximal step is θ' = θ − lr·(g + μ(θ − ref)); μ = 0 is exactly a plain step.
func TestSessionProx(t *testing.T) {
	spec := ModelSpec{Arch: "mlp", InputShape: []int{6}, NumClasses: 3, Hidden: []int{5}}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	init, ref := spec.Init(5), spec.Init(6)
	x := []float32{1, -2, 0.5, 3, 0, 1, 2, 2, -1, 0, 1, -3}
	y := []int32{2, 0}
	g, err := m.Gradient(init, x, y)
	if err != nil {
		t.Fatal(err)
	}
	step := func(mu float32) tensor.List {
		s, _ := m.NewSession(init, SGD{LR: 0.5})
		defer s.Close()
		if err := s.SetProx(mu, ref); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Step(x, y); err != nil {
			t.Fatal(err)
		}
		p, _ := s.Params()
		return p
	}
	got := step(0.1)
	for i := range g {
		for j, v := range g[i].Data {
			want := init[i].Data[j] - 0.5*(v+0.1*(init[i].Data[j]-ref[i].Data[j]))
			if d := math.Abs(float64(got[i].Data[j] - want)); d > 1e-6 {
				t.Fatalf("%s[%d]: %v, want %v", g[i].Name, j, got[i].Data[j], want)
			}
		}
	}
	plain, _ := m.NewSession(init, SGD{LR: 0.5})
	defer plain.Close()
	plain.Step(x, y)
	p, _ := plain.Params()
	if !reflect.DeepEqual(step(0), p) {
		t.Error("mu = 0 differs from a plain step")
	}
}

// TestNoDecayGraphMatches: without weight decay the step graph compiled for the short hyper
// input (no decay term) gives the parameters of the full graph run with weight decay 0, bit
// for bit, plain, masked and proximal.
func TestNoDecayGraphMatches(t *testing.T) {
	spec := ModelSpec{Arch: ArchCNN4, InputShape: []int{16, 16, 1}, NumClasses: 4}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := rand.New(rand.NewPCG(5, 6))
	init := spec.Init(3)
	mask := init.Clone()
	for _, tn := range mask {
		for i := range tn.Data {
			tn.Data[i] = float32(r.IntN(2))
		}
	}
	ref := init.Clone()
	for _, tn := range ref {
		for i := range tn.Data {
			tn.Data[i] += float32(r.NormFloat64()) * 0.01
		}
	}
	x, y := randomData(r, 40, 256, 4)
	opt := SGD{LR: 0.05, Momentum: 0.7}
	run := func(variant string, full bool) tensor.List {
		s, err := m.NewSession(init, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		switch variant {
		case "masked":
			err = s.SetMask(mask)
		case "prox":
			err = s.SetProx(0.1, ref)
		}
		if err != nil {
			t.Fatal(err)
		}
		if full { // [lr, momentum, 0 (, μ)]: the graph with the decay term
			s.decayTerm = true
			s.SetLR(opt.LR)
		}
		for b := 0; b < 40; b += 16 {
			if _, err := s.Step(x[b*256:min(b+16, 40)*256], y[b:min(b+16, 40)]); err != nil {
				t.Fatal(err)
			}
		}
		p, err := s.Params()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, variant := range []string{"plain", "masked", "prox"} {
		short, full := run(variant, false), run(variant, true)
		for i := range short {
			for j, v := range short[i].Data {
				if math.Float32bits(v) != math.Float32bits(full[i].Data[j]) {
					t.Fatalf("%s: %s[%d] = %v without the decay term, %v with weight decay 0", variant, short[i].Name, j, v, full[i].Data[j])
				}
			}
		}
	}
	if c := m.Compilations(); c["train"] != 2 {
		t.Errorf("compiled %v; want two plain step graphs (with and without the decay term)", c)
	}
}

// SampleGradients gives, sample by sample, the bits of Gradient of that sample alone, in
// the order of Names, and leaves BatchStats as the last sample's Gradient does (a small
// ResNet-18, so that there are statistics); a wrong input length and fn's error stop it.
func TestSampleGradientsAreSingleSampleGradients(t *testing.T) {
	spec := ModelSpec{Arch: ArchResNet18, InputShape: []int{6, 6, 3}, NumClasses: 3, Width: 2}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	params := spec.Init(9)
	const n, size = 3, 6 * 6 * 3
	x := make([]float32, n*size)
	for i := range x {
		x[i] = float32(math.Sin(1.3 * float64(i)))
	}
	y := []int32{2, 0, 1}
	names := m.Names()
	got := make([][][]float32, n)
	err = m.SampleGradients(params, x, y, func(i, k int, g []float32) error {
		if k != len(got[i]) {
			t.Fatalf("sample %d: tensor %d out of order", i, k)
		}
		got[i] = append(got[i], append([]float32(nil), g...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stats := m.BatchStats().Clone()
	for i := range n {
		want, err := m.Gradient(params, x[i*size:(i+1)*size], y[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		if len(got[i]) != len(want) {
			t.Fatalf("sample %d: %d tensors, want %d", i, len(got[i]), len(want))
		}
		for k, w := range want {
			if w.Name != names[k] || !reflect.DeepEqual(got[i][k], w.Data) {
				t.Fatalf("sample %d, %s: not the single-sample gradient's bits", i, w.Name)
			}
		}
	}
	if len(stats) == 0 || !reflect.DeepEqual(stats, m.BatchStats()) {
		t.Error("BatchStats after SampleGradients is not the last sample's")
	}
	if err := m.SampleGradients(params, x[:size+1], y[:1], func(int, int, []float32) error { return nil }); err == nil {
		t.Error("an input of the wrong length was accepted")
	}
	stop := errors.New("stop")
	calls := 0
	err = m.SampleGradients(params, x, y, func(int, int, []float32) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("fn's error: got %v after %d calls, want it at once", err, calls)
	}
}
