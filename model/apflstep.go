package model

import (
	"errors"
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// APFL's local step in one compiled graph: the global model w and the personal model v
// (stages/train/methods/apfl.go, apfl_flbench.go) advance together, both models' parameters
// and momentum buffers stay on the backend between batches, and the mixing weight α goes in
// as a one-element input, so a batch costs one graph call and no parameter copies.

// APFLVariant is the APFL step an APFLSession compiles.
type APFLVariant int

const (
	// APFLParamMix is the paper's step (Deng et al.): with w, v the iterates before the
	// batch, g = ∇f(α·v + (1−α)·w) in training mode; w takes the step Session.Step takes
	// (the run's SGD with w's momentum); v ← v − lr·α·g, its running statistics those the
	// mixture's forward pass moved them to; Step returns ⟨v − w, g⟩ over the trained
	// parameters, the gradient of the loss with respect to α.
	APFLParamMix APFLVariant = iota
	// APFLOutputMix is FL-bench's step (src/client/apfl.py:53-64 of the FedOBP fork): g_w =
	// ∇CE(w(x)); w′ = step(w, g_w); g_v = ∇_v CE(α·v(x) + (1−α)·w′(x)) with w′(x) held
	// fixed; w″ = step(w′, g_w); v′ = step(v, g_v), where step(θ, g) is PyTorch's SGD with
	// θ's own momentum buffer, buf ← μ·buf + g + λ·θ, θ ← θ − lr·buf, which skips running
	// statistics. Every forward pass runs in training mode: w's running statistics are those
	// of its second pass (at w′), v's those of its pass. Step returns Σ (v′ − w″)·(α·g_v +
	// (1−α)·g_w) over the trained parameters (FL-bench's update_alpha, :73-88, before its
	// 0.02·α term).
	APFLOutputMix
)

// APFLSession is one client's APFL training (see APFLVariant): w and v with a momentum
// buffer each, starting at zero, kept on the backend between steps. Use it from one
// goroutine at a time, as its Model.
type APFLSession struct {
	m       *Model
	variant APFLVariant
	w, momW []*tensors.Tensor
	v, momV []*tensors.Tensor // momV: APFLOutputMix only
	hyper   *tensors.Tensor
}

// NewAPFLSession starts APFL training of the given variant from the global model w and the
// personal model v (matched by name; copied) with the run's optimizer settings.
func (m *Model) NewAPFLSession(variant APFLVariant, w, v tensor.List, opt SGD) (*APFLSession, error) {
	if m.train == nil {
		return nil, errors.New("model is closed")
	}
	if variant != APFLParamMix && variant != APFLOutputMix {
		return nil, fmt.Errorf("unknown APFL variant %d", variant)
	}
	s := &APFLSession{m: m, variant: variant}
	var err error
	if s.w, err = m.toTensors(w); err != nil {
		return nil, err
	}
	if s.v, err = m.toTensors(v); err != nil {
		s.Close()
		return nil, fmt.Errorf("personal model: %w", err)
	}
	s.momW = m.zeroTensors()
	if variant == APFLOutputMix {
		s.momV = m.zeroTensors()
	}
	// As Session.hyperTensor: without weight decay the steps leave out its term, with the
	// same results up to the sign of a zero.
	h := []float32{opt.LR, opt.Momentum, opt.WeightDecay}
	if opt.WeightDecay == 0 {
		h = h[:2]
	}
	s.hyper = tensors.FromFlatDataAndDimensions(h, len(h))
	return s, nil
}

// zeroTensors returns a zero tensor shaped like each parameter, in canonical order.
func (m *Model) zeroTensors() []*tensors.Tensor {
	out := make([]*tensors.Tensor, len(m.shapes))
	for i, shape := range m.shapes {
		out[i] = tensors.FromFlatDataAndDimensions(make([]float32, tensor.Size(shape)), shape...)
	}
	return out
}

// state lists the session's backend tensors in the order its graph takes them.
func (s *APFLSession) state() []*tensors.Tensor {
	out := append(append(append([]*tensors.Tensor(nil), s.w...), s.momW...), s.v...)
	return append(out, s.momV...)
}

// Step runs the variant's step on a mini-batch (laid out as in Session.Step; a ragged
// batch is padded as Session.Step pads it) with mixing weight alpha. With sum it returns
// the variant's α gradient term, summed in float64 over the trained tensors' float32 sums;
// without, 0, from a graph that leaves the term out (w and v are the same either way).
// After an error the session must not be used further.
func (s *APFLSession) Step(x []float32, y []int32, alpha float32, sum bool) (float64, error) {
	if s.w == nil {
		return 0, errors.New("session is closed")
	}
	m := s.m
	if m.train == nil {
		return 0, errors.New("model is closed")
	}
	name, graph := "apfl-parammix", apflParamMixGraph
	if s.variant == APFLOutputMix {
		name, graph = "apfl-outputmix", apflOutputMixGraph
	}
	if !sum {
		name += "-nosum"
	}
	e, err := m.auxExec(name, func(net network, inputs []*Node) []*Node { return graph(net, inputs, sum) })
	if err != nil {
		return 0, err
	}
	xt, yt, err := m.batchTensors(x, y, m.gradRows(len(y)))
	if err != nil {
		return 0, err
	}
	at := tensors.FromFlatDataAndDimensions([]float32{alpha}, 1)
	defer finalize(xt, yt, at)
	state := s.state()
	args := make([]any, 0, len(state)+4)
	// Parameters and momentum are donated: the backend may update them in place.
	for _, t := range state {
		d, err := DonateTensorBuffer(t, m.backend, 0)
		if err != nil {
			return 0, err
		}
		args = append(args, d)
	}
	outs, err := e.Exec(append(args, xt, yt, s.hyper, at)...)
	if err != nil {
		s.w, s.momW, s.v, s.momV = nil, nil, nil, nil
		return 0, fmt.Errorf("APFL step: %w", err)
	}
	finalize(state...)
	n := len(m.names)
	s.w, s.momW, s.v = outs[:n], outs[n:2*n], outs[2*n:3*n]
	sums := outs[3*n:]
	if s.variant == APFLOutputMix {
		s.momV, sums = outs[3*n:4*n], outs[4*n:]
	}
	defer finalize(sums...)
	total := 0.0
	for _, t := range sums {
		total += float64(tensors.ToScalar[float32](t))
	}
	return total, nil
}

// Params returns copies of the current global and personal models, in canonical order.
func (s *APFLSession) Params() (w, v tensor.List, err error) {
	if s.w == nil {
		return nil, nil, errors.New("session is closed")
	}
	if w, err = s.m.copyOut(s.w); err != nil {
		return nil, nil, err
	}
	if v, err = s.m.copyOut(s.v); err != nil {
		return nil, nil, err
	}
	return w, v, nil
}

// Close releases the session's buffers.
func (s *APFLSession) Close() {
	finalize(s.state()...)
	finalize(s.hyper)
	s.w, s.momW, s.v, s.momV, s.hyper = nil, nil, nil, nil, nil
}

// sumAll is the sum of every entry of x in two stages, for speed: the rows of x's last
// axis are added first, column by column (fpfast's ReduceSum over a leading axis runs its
// vector loop across the columns, on every thread), then the column sums.
func sumAll(x *Node) *Node {
	dims := x.Shape().Dimensions
	if len(dims) < 2 {
		return ReduceAllSum(x)
	}
	last := dims[len(dims)-1]
	return ReduceAllSum(ReduceSum(Reshape(x, x.Shape().Size()/last, last), 0))
}

// apflParamMixGraph builds APFLParamMix's step: inputs = w (n), w's momentum (n), v (n), x,
// labels, hyper (Session's: [lr, momentum(, weight decay)]), α [1]; outputs = new w (n), new
// momentum (n), new v (n), then, with sum, one scalar per trained parameter: its share of
// ⟨v − w, g⟩.
func apflParamMixGraph(net network, inputs []*Node, sum bool) []*Node {
	n := net.numParams()
	w, moms, v := inputs[:n], inputs[n:2*n], inputs[2*n:3*n]
	x, labels, hyper, alpha := inputs[3*n], inputs[3*n+1], inputs[3*n+2], Reshape(inputs[3*n+3])
	wOuts := sgdStepGraph(net, append(append(append([]*Node(nil), w...), moms...), x, labels, hyper), false, false)
	oneMinus := Sub(ScalarOne(alpha.Graph(), alpha.DType()), alpha)
	mixed := make([]*Node, n)
	for i := range w {
		mixed[i] = Add(Mul(alpha, v[i]), Mul(oneMinus, w[i]))
	}
	_, grads, state := net.trainPass(mixed, x, labels)
	step := Mul(Reshape(Slice(hyper, AxisElem(0))), alpha) // lr·α
	outs := append([]*Node(nil), wOuts[:2*n]...)
	var dots []*Node
	for i := range v {
		if state[i] != nil {
			outs = append(outs, state[i])
			continue
		}
		if sum {
			dots = append(dots, sumAll(Mul(Sub(v[i], w[i]), grads[i])))
		}
		outs = append(outs, Sub(v[i], Mul(step, grads[i])))
	}
	return append(outs, dots...)
}

// apflOutputMixGraph builds APFLOutputMix's step: inputs = w (n), w's momentum (n), v (n),
// v's momentum (n), x, labels, hyper [lr, momentum(, weight decay)], α [1]; outputs = new w
// (n), its momentum (n), new v (n), its momentum (n), then, with sum, one scalar per
// trained parameter: its share of Σ (v′ − w″)·(α·g_v + (1−α)·g_w).
func apflOutputMixGraph(net network, inputs []*Node, sum bool) []*Node {
	n := net.numParams()
	w, momW, v, momV := inputs[:n], inputs[n:2*n], inputs[2*n:3*n], inputs[3*n:4*n]
	x, labels, hyper, alpha := inputs[4*n], inputs[4*n+1], inputs[4*n+2], Reshape(inputs[4*n+3])
	lr := Reshape(Slice(hyper, AxisElem(0)))
	mom := Reshape(Slice(hyper, AxisElem(1)))
	var wd *Node
	if hyper.Shape().Dimensions[0] == 3 {
		wd = Reshape(Slice(hyper, AxisElem(2)))
	}
	// step is one PyTorch SGD step of θ with gradient g and buffer buf: the new θ and buf,
	// in the order of FL-bench's torch.optim.SGD (and of the Go loop this graph replaced).
	step := func(theta, buf, g *Node) (*Node, *Node) {
		b := Add(Mul(mom, buf), g)
		if wd != nil {
			b = Add(b, Mul(wd, theta))
		}
		return Sub(theta, Mul(lr, b)), b
	}
	oneMinus := Sub(ScalarOne(alpha.Graph(), alpha.DType()), alpha)
	_, gw, statsW1 := net.trainPass(w, x, labels)
	w1, momW1 := make([]*Node, n), make([]*Node, n)
	for i := range w {
		if statsW1[i] != nil {
			w1[i], momW1[i] = statsW1[i], momW[i]
			continue
		}
		w1[i], momW1[i] = step(w[i], momW[i], gw[i])
	}
	logits, statsW2 := trainLogitsPass(net, w1, x)
	gv, statsV := mixedPass(net, v, x, labels, Mul(oneMinus, logits), alpha)
	outW, outMomW := make([]*Node, n), make([]*Node, n)
	outV, outMomV := make([]*Node, n), make([]*Node, n)
	var sums []*Node
	for i := range w {
		if statsV[i] != nil || gv[i] == nil {
			// A running statistic: w's from its second forward pass, v's from its own.
			outW[i], outMomW[i] = statsW2[i], momW1[i]
			outV[i], outMomV[i] = statsV[i], momV[i]
			continue
		}
		outW[i], outMomW[i] = step(w1[i], momW1[i], gw[i])
		outV[i], outMomV[i] = step(v[i], momV[i], gv[i])
		if sum {
			sums = append(sums, sumAll(Mul(Sub(outV[i], outW[i]), Add(Mul(alpha, gv[i]), Mul(oneMinus, gw[i])))))
		}
	}
	outs := append(append(append(outW, outMomW...), outV...), outMomV...)
	return append(outs, sums...)
}
