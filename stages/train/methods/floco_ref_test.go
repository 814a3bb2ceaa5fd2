package methods

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/rng"
	"github.com/fedpipe/fedpipe/stages/train"
)

// refStep is goSGD.step as it was before its loops were specialized (the reference its
// bits are checked against).
func (s *goSGD) refStep(key string, params, grads, mask tensor.List, scale float32) {
	for _, p := range params {
		gi := grads.Find(p.Name)
		if gi < 0 || model.IsRunningStat(p.Name) {
			continue
		}
		g := grads[gi].Data
		var m []float32
		if mask != nil {
			if mi := mask.Find(p.Name); mi >= 0 {
				m = mask[mi].Data
			}
		}
		buf := s.buf[key+p.Name]
		if buf == nil {
			buf = make([]float32, len(p.Data))
			s.buf[key+p.Name] = buf
		}
		for i := range p.Data {
			if m != nil && m[i] == 0 {
				continue
			}
			d := scale*g[i] + s.opt.WeightDecay*p.Data[i]
			buf[i] = s.opt.Momentum*buf[i] + d
			p.Data[i] -= s.opt.LR * buf[i]
		}
	}
}

// refTrainSimplex is floco.trainSimplex as it was before it trained the point's tensors in
// place (a clone of the model per batch through point, and goSGD.refStep).
func (f *floco) refTrainSimplex(l *train.Local, st *train.State, ends []tensor.List, center []float64, stream string) (tensor.List, []tensor.List, error) {
	local := make([]tensor.List, f.m)
	for m, e := range ends {
		local[m] = e.Clone()
	}
	body := tensorsNamed(st.Global.Clone(), func(n string) bool { return !f.inSimplex(n) })
	full := st.Global.Clone()
	alphaStream, shuffle := "floco-alpha", "shuffle"
	if stream != "" {
		alphaStream, shuffle = stream+"/alpha", stream+"/shuffle"
	}
	r := rng.New(l.Seed(), l.Round(), l.Client(), alphaStream)
	opt := newGoSGD(l.Optimizer())
	err := l.Batches(l.Epochs(), shuffle, func(e int, x []float32, y []int32) error {
		alpha := f.sample(r, center)
		for _, t := range body {
			copy(full[full.Find(t.Name)].Data, t.Data)
		}
		var g, stats tensor.List
		err := l.WithModel(func(m *model.Model) (err error) {
			g, err = m.Gradient(point(full, local, alpha), x, y)
			stats = slices.Clone(m.BatchStats())
			return err
		})
		if err != nil {
			return err
		}
		opt.refStep("body/", body, g, nil, 1)
		setStats(body, stats)
		for m := range local {
			opt.refStep(fmt.Sprintf("e%d/", m), local[m], g, nil, float32(alpha[m]))
		}
		for _, t := range body {
			for _, v := range t.Data {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return fmt.Errorf("training diverged (epoch %d): lower the learning rate", e+1)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, t := range body {
		copy(full[full.Find(t.Name)].Data, t.Data)
	}
	return full, local, nil
}

// trainSimplex gives the bits of the reference it replaced (refTrainSimplex), in both
// implementations, sampling over the whole simplex and around a center, on an MLP and on a
// small ResNet-18 (BatchNorm statistics in the body), with momentum and weight decay.
func TestFLOCOTrainSimplexKeepsBits(t *testing.T) {
	mlp := model.ModelSpec{Arch: model.ArchMLP, InputShape: []int{6}, NumClasses: 3, Hidden: []int{8}}
	resnet := model.ModelSpec{Arch: model.ArchResNet18, InputShape: []int{6, 6, 3}, NumClasses: 3, Width: 2}
	for _, spec := range []model.ModelSpec{mlp, resnet} {
		m, err := model.NewModel("", spec)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		r := rngForTest()
		size := tensor.Size(spec.InputShape)
		const n = 11
		x := make([]float32, n*size)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		y := make([]int32, n)
		for i := range y {
			y[i] = int32(r.IntN(spec.NumClasses))
		}
		opt := model.SGD{LR: 0.05, Momentum: 0.7, WeightDecay: 1e-3}
		for _, flbench := range []bool{false, true} {
			for _, center := range [][]float64{nil, {0.5, 0.3, 0.2}} {
				t.Run(fmt.Sprint(spec.Arch, " flbench=", flbench, " center=", center), func(t *testing.T) {
					f := &floco{m: 3, tau: 1, rho: 0.1, flbench: flbench}
					st := &train.State{Global: spec.Init(3)}
					f.Init(st, 1)
					cfg := train.LocalConfig{Model: m, Optimizer: opt, TrainX: x, TrainY: y, Epochs: 2, BatchSize: 4, Seed: 7, Round: 1, Rounds: 1}
					ends := f.endpoints(st, 7)
					before := make([]tensor.List, len(ends))
					for k, e := range ends {
						before[k] = e.Clone()
					}
					wantFull, wantEnds, err := f.refTrainSimplex(train.NewLocal(cfg), st, ends, center, "")
					if err != nil {
						t.Fatal(err)
					}
					gotFull, gotEnds, err := f.trainSimplex(train.NewLocal(cfg), st, ends, center, "")
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(gotFull, wantFull) {
						t.Error("the trained model differs from the reference's bits")
					}
					if !reflect.DeepEqual(gotEnds, wantEnds) {
						t.Error("the trained endpoints differ from the reference's bits")
					}
					if reflect.DeepEqual(gotEnds, before) || reflect.DeepEqual(gotFull, st.Global) {
						t.Error("training changed nothing: the comparison checks nothing")
					}
					if !reflect.DeepEqual(ends, before) {
						t.Error("training wrote into the round's endpoints")
					}
				})
			}
		}
	}
}

// goSGD.step with and without a mask, and with a scale, gives refStep's bits.
func TestGoSGDStepKeepsBits(t *testing.T) {
	r := rngForTest()
	mk := func(name string, n int) tensor.Tensor {
		tt := tensor.New(name, n)
		for i := range tt.Data {
			tt.Data[i] = float32(r.NormFloat64())
		}
		return tt
	}
	params := tensor.List{mk("a.weight", 37), mk("b.weight", 5)}
	mask := tensor.List{mk("a.weight", 37)}
	for i, v := range mask[0].Data {
		mask[0].Data[i] = float32(max(0, math.Copysign(1, float64(v))))
	}
	opt := model.SGD{LR: 0.03, Momentum: 0.9, WeightDecay: 5e-4}
	for _, m := range []tensor.List{nil, mask} {
		got, want := params.Clone(), params.Clone()
		a, b := newGoSGD(opt), newGoSGD(opt)
		for k := range 4 {
			g := tensor.List{mk("a.weight", 37), mk("b.weight", 5)}
			if !a.step("k/", got, g, m, 0.3*float32(k+1)) {
				t.Fatal("step reports a non-finite entry of a finite update")
			}
			b.refStep("k/", want, g, m, 0.3*float32(k+1))
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(a.buf, b.buf) {
			t.Errorf("mask %v: step's bits differ from the reference's", m != nil)
		}
		if reflect.DeepEqual(got, params) {
			t.Error("step changed nothing")
		}
	}
	g := tensor.List{mk("a.weight", 37), mk("b.weight", 5)}
	g[1].Data[3] = float32(math.Inf(1))
	if newGoSGD(opt).step("k/", params.Clone(), g, nil, 1) {
		t.Error("step reports an infinite entry as finite")
	}
}

// BenchmarkFLOCOTrainSimplex times one epoch of FLOCO's local training of cnn4 on
// 28×28×1 (128 samples, batch 32, 3 endpoints) with trainSimplex and with the reference it
// replaced, alternately, beside FedAvg's local training of the same epoch (Local.Fit), and
// reports each one's process CPU time per call (cpu-ms/new, cpu-ms/ref, cpu-ms/fedavg): on
// a shared machine CPU time, measured side by side, compares better than wall time.
func BenchmarkFLOCOTrainSimplex(b *testing.B) {
	spec := model.ModelSpec{Arch: model.ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	m, err := model.NewModel("", spec)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	r := rngForTest()
	const n = 128
	x := make([]float32, n*28*28)
	for i := range x {
		x[i] = float32(r.Float64())
	}
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(r.IntN(10))
	}
	f := &floco{m: 3, tau: 1, rho: 0.1}
	st := &train.State{Global: spec.Init(3)}
	f.Init(st, 1)
	cfg := train.LocalConfig{Model: m, Optimizer: model.SGD{LR: 0.01, Momentum: 0.7}, TrainX: x, TrainY: y, Epochs: 1, BatchSize: 32, Seed: 7, Round: 1, Rounds: 1}
	ends := f.endpoints(st, 7)
	cpu := func() time.Duration {
		var u syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
			b.Fatal(err)
		}
		return time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	fedavg := func(l *train.Local, st *train.State, _ []tensor.List, _ []float64, _ string) (tensor.List, []tensor.List, error) {
		p, err := l.Fit(st.Global, train.Fit{})
		return p, nil, err
	}
	var spent [3]time.Duration
	b.ResetTimer()
	for range b.N {
		for k, run := range []func(*train.Local, *train.State, []tensor.List, []float64, string) (tensor.List, []tensor.List, error){f.trainSimplex, f.refTrainSimplex, fedavg} {
			start := cpu()
			if _, _, err := run(train.NewLocal(cfg), st, ends, nil, ""); err != nil {
				b.Fatal(err)
			}
			spent[k] += cpu() - start
		}
	}
	b.ReportMetric(float64(spent[0].Milliseconds())/float64(b.N), "cpu-ms/new")
	b.ReportMetric(float64(spent[1].Milliseconds())/float64(b.N), "cpu-ms/ref")
	b.ReportMetric(float64(spent[2].Milliseconds())/float64(b.N), "cpu-ms/fedavg")
}
