package methods

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// The Go-loop implementations of APFL's local training that model.APFLSession replaced,
// kept as the references its compiled steps are checked against: each batch takes its
// gradients from separate graph calls on parameters copied in and out, and applies the
// updates in Go.

// apflPaperReference is the paper variant's Train before the compiled step: the gradient
// of the mixture from Model.Gradient, w stepped by a Session, v and ⟨v − w, g⟩ in Go.
func apflPaperReference(l *train.Local, w0, v0 tensor.List, alpha, alphaLR float32) (w, v tensor.List, _ float32, _ error) {
	v = v0.Clone()
	s, err := l.Model().NewSession(w0, l.Optimizer())
	if err != nil {
		return nil, nil, 0, err
	}
	defer s.Close()
	w = w0
	err = l.Batches(l.Epochs(), "shuffle", func(_ int, x []float32, y []int32) error {
		g, err := l.Model().Gradient(mix(alpha, v, w), x, y)
		if err != nil {
			return err
		}
		setStats(v, l.Model().BatchStats())
		if _, err := s.Step(x, y); err != nil {
			return err
		}
		dot := 0.0
		for t := range v {
			gt, vt, wt := g[g.Find(v[t].Name)].Data, v[t].Data, w[w.Find(v[t].Name)].Data
			for i := range vt {
				dot += float64(vt[i]-wt[i]) * float64(gt[i])
				vt[i] -= l.Optimizer().LR * alpha * gt[i]
			}
		}
		alpha = min(max(alpha-alphaLR*float32(dot), 0), 1)
		w, err = s.Params()
		return err
	})
	if err != nil {
		return nil, nil, 0, err
	}
	w, err = s.Params()
	return w, v, alpha, err
}

// sgd is one PyTorch SGD step of θ with gradient g and momentum buffer buf (both updated),
// skipping running statistics.
func sgd(opt model.SGD, theta, buf, g tensor.List) {
	for t := range theta {
		if model.IsRunningStat(theta[t].Name) {
			continue
		}
		th, b, gt := theta[t].Data, buf[buf.Find(theta[t].Name)].Data, g[g.Find(theta[t].Name)].Data
		for i := range th {
			b[i] = opt.Momentum*b[i] + gt[i] + opt.WeightDecay*th[i]
			th[i] -= opt.LR * b[i]
		}
	}
}

// updateAlpha is FL-bench's update_alpha after a batch, summed in Go over the models
// after the batch's steps.
func updateAlpha(alpha, step float32, v, w, gv, gw tensor.List) float32 {
	grad := 0.0
	for t := range v {
		vt, wt := v[t].Data, w[w.Find(v[t].Name)].Data
		gvt, gwt := gv[gv.Find(v[t].Name)].Data, gw[gw.Find(v[t].Name)].Data
		for i := range vt {
			grad += float64(vt[i]-wt[i]) * float64(alpha*gvt[i]+(1-alpha)*gwt[i])
		}
	}
	grad += 0.02 * float64(alpha)
	return min(max(alpha-step*float32(grad), 0), 1)
}

// apflFLBenchReference is the flbench variant's Train before the compiled step.
func apflFLBenchReference(l *train.Local, w0, v0 tensor.List, alpha float32, adaptive bool) (w, v tensor.List, _ float32, _ error) {
	w, v = w0.Clone(), v0.Clone()
	bufW, bufV := train.ZeroMask(w), train.ZeroMask(v)
	opt := l.Optimizer()
	m := l.Model()
	err := l.Batches(l.Epochs(), "shuffle", func(e int, x []float32, y []int32) error {
		gw, err := m.Gradient(w, x, y)
		if err != nil {
			return err
		}
		statsW := slices.Clone(m.BatchStats())
		sgd(opt, w, bufW, gw)
		var logits []float32
		if m.HasBatchNorm() {
			setStats(w, statsW)
			if logits, err = m.TrainLogits(w, x, y); err != nil {
				return err
			}
			statsW = slices.Clone(m.BatchStats())
		} else if logits, err = m.Logits(w, x, len(y)); err != nil {
			return err
		}
		offset := make([]float32, len(logits))
		for i, z := range logits {
			offset[i] = (1 - alpha) * z
		}
		if len(offset) != len(y)*m.Spec().NumClasses {
			return errors.New("APFL: logits of the wrong size")
		}
		gv, err := m.MixedGradient(v, x, y, alpha, offset)
		if err != nil {
			return err
		}
		statsV := slices.Clone(m.BatchStats())
		sgd(opt, w, bufW, gw)
		sgd(opt, v, bufV, gv)
		setStats(w, statsW)
		setStats(v, statsV)
		if adaptive && e == 0 {
			alpha = updateAlpha(alpha, opt.LR, v, w, gv, gw)
		}
		return nil
	})
	return w, v, alpha, err
}

// closeLists fails unless got and want name the same tensors with every entry within
// tol·(1 + |want|).
func closeLists(got, want tensor.List, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d tensors, want %d", len(got), len(want))
	}
	for _, w := range want {
		i := got.Find(w.Name)
		if i < 0 {
			return fmt.Errorf("no %s", w.Name)
		}
		for j, x := range w.Data {
			if d := math.Abs(float64(got[i].Data[j] - x)); d > tol*(1+math.Abs(float64(x))) || math.IsNaN(d) {
				return fmt.Errorf("%s[%d] = %v, want %v", w.Name, j, got[i].Data[j], x)
			}
		}
	}
	return nil
}

// apflStepCase is a client on which the compiled APFL steps are compared with the
// references: a model, its data, and a w and v that differ.
type apflStepCase struct {
	name string
	m    *model.Model
	cfg  train.LocalConfig
	w, v tensor.List
}

// apflStepCases are cnn4 (im2col convolutions, 10 samples in batches of 4: the last one
// ragged and padded, weight decay on) and a ResNet-18 of width 2 (BatchNorm, 7 samples in
// batches of 3), each for 2 epochs.
func apflStepCases(t *testing.T) []apflStepCase {
	t.Helper()
	cnnSpec := model.ModelSpec{Arch: model.ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	cnn, err := model.NewModel("", cnnSpec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cnn.Close)
	const nc = 10
	xc := make([]float32, nc*28*28)
	for i := range xc {
		xc[i] = float32(math.Sin(0.013*float64(i))) * 0.8
	}
	yc := []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	rnSpec, rn := tinyResNet(t)
	const nr = 7
	return []apflStepCase{
		{name: "cnn4", m: cnn, w: cnnSpec.Init(11), v: cnnSpec.Init(12),
			cfg: train.LocalConfig{Model: cnn, Optimizer: model.SGD{LR: 0.05, Momentum: 0.7, WeightDecay: 1e-3},
				TrainX: xc, TrainY: yc, Epochs: 2, BatchSize: 4, Seed: 7, Round: 2, Rounds: 3}},
		{name: "resnet18", m: rn, w: rnSpec.Init(21), v: rnSpec.Init(22),
			cfg: train.LocalConfig{Model: rn, Optimizer: model.SGD{LR: 0.05, Momentum: 0.7},
				TrainX: waveImages(nr, math.Sin, 0.31, 0.1), TrainY: []int32{0, 1, 2, 0, 1, 2, 1},
				Epochs: 2, BatchSize: 3, Seed: 4, Round: 1, Rounds: 1}},
	}
}

// apflCompiled trains one client with the method's Train (the compiled step) from w0, v0
// and alpha: the upload and the new α.
func apflCompiled(t *testing.T, meth train.Method, cfg train.LocalConfig, w0, v0 tensor.List, alpha float32) (train.Upload, float32) {
	t.Helper()
	st := &train.State{Global: w0.Clone()}
	meth.Init(st, 1)
	st.Personal[0] = v0.Clone()
	st.Method.(*apflState).Alpha[0] = alpha
	u, err := meth.Train(train.NewLocal(cfg), st, 0)
	if err != nil {
		t.Fatal(err)
	}
	return u, st.Method.(*apflState).Alpha[0]
}

// TestAPFLCompiledStepMatchesReference: over 2 epochs of a few batches each, the paper and
// flbench variants' compiled steps give the w, v and α the Go-loop references give, to
// float32 rounding (the sums over a batch and over the parameters are taken in another
// order), with α adapting and fixed. Running each twice gives the same bits.
func TestAPFLCompiledStepMatchesReference(t *testing.T) {
	const tol = 1e-5
	for _, tc := range apflStepCases(t) {
		for _, impl := range []string{"paper", "flbench"} {
			for _, alphaLR := range []float32{0, 0.5} {
				name := fmt.Sprintf("%s/%s/alpha_lr=%v", tc.name, impl, alphaLR)
				meth := buildMethod(t, "apfl", map[string]float64{"alpha_lr": float64(alphaLR)}, map[string]string{"impl": impl})
				const alpha0 = 0.4
				u, alpha := apflCompiled(t, meth, tc.cfg, tc.w, tc.v, alpha0)
				var w, v tensor.List
				var want float32
				var err error
				if impl == "paper" {
					w, v, want, err = apflPaperReference(train.NewLocal(tc.cfg), tc.w, tc.v, alpha0, alphaLR)
				} else {
					w, v, want, err = apflFLBenchReference(train.NewLocal(tc.cfg), tc.w, tc.v, alpha0, alphaLR != 0)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := closeLists(u.Params, w, tol); err != nil {
					t.Errorf("%s: w: %v", name, err)
				}
				if err := closeLists(u.Personal, v, tol); err != nil {
					t.Errorf("%s: v: %v", name, err)
				}
				if math.Abs(float64(alpha-want)) > 1e-6 {
					t.Errorf("%s: alpha %v, reference %v", name, alpha, want)
				}
				if (alphaLR == 0) != (alpha == alpha0) {
					t.Errorf("%s: alpha %v from %v", name, alpha, float32(alpha0))
				}
				again, alpha2 := apflCompiled(t, meth, tc.cfg, tc.w, tc.v, alpha0)
				if !reflect.DeepEqual(again, u) || alpha2 != alpha {
					t.Errorf("%s: a second run differs", name)
				}
			}
		}
	}
}
