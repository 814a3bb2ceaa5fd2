package model

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// SGD holds the hyper-parameters of stochastic gradient descent with PyTorch's semantics
// (torch.optim.SGD without dampening or Nesterov): for each parameter θ with gradient g,
//
//	buf = Momentum·buf + (g + WeightDecay·θ);  θ -= LR·buf
//
// with buf starting at zero.
type SGD struct{ LR, Momentum, WeightDecay float32 }

// Session is one client's local training: current parameters and momentum buffers, kept on
// the backend between steps. Use it from one goroutine at a time.
type Session struct {
	m      *Model
	params []*tensors.Tensor
	moms   []*tensors.Tensor
	masks  []*tensors.Tensor // nil: every entry is updated
	// frozen, when the masks freeze a seqNet's first layers whole, is the masked step
	// without their backward pass (frozenTrainStepGraph); nil: the masked step.
	frozen *graph.Exec
	refs   []*tensors.Tensor // proximal anchor; nil: no proximal term
	ones   []*tensors.Tensor // all-ones masks for proximal steps without a mask
	mu     float32
	hyper  *tensors.Tensor
	opt    SGD
	// decayTerm keeps the weight decay in the hyper input even when it is 0 (tests compare
	// the step graph with and without its decay term).
	decayTerm bool
}

// NewSession starts training from params (matched by name; copied) with the given
// optimizer settings. Momentum buffers start at zero.
func (m *Model) NewSession(params tensor.List, opt SGD) (*Session, error) {
	if m.train == nil {
		return nil, errors.New("model is closed")
	}
	ps, err := m.toTensors(params)
	if err != nil {
		return nil, err
	}
	moms := make([]*tensors.Tensor, len(ps))
	for i, shape := range m.shapes {
		moms[i] = tensors.FromFlatDataAndDimensions(make([]float32, tensor.Size(shape)), shape...)
	}
	s := &Session{m: m, params: ps, moms: moms, opt: opt}
	s.hyper = s.hyperTensor(false)
	return s, nil
}

// hyperTensor returns the step graphs' hyper-parameter input: [lr, momentum, weight decay],
// then μ when prox. Without weight decay the entry is left out, and the graph compiled for
// that shape skips the decay term (see sgdStepGraph).
func (s *Session) hyperTensor(prox bool) *tensors.Tensor {
	h := []float32{s.opt.LR, s.opt.Momentum}
	if s.opt.WeightDecay != 0 || s.decayTerm {
		h = append(h, s.opt.WeightDecay)
	}
	if prox {
		h = append(h, s.mu)
	}
	return tensors.FromFlatDataAndDimensions(h, len(h))
}

// SetMask restricts the following steps to the entries where mask is 1: every other entry
// keeps its value exactly (its momentum only decays). mask holds 0/1 tensors matched by
// name; a parameter it does not name is updated everywhere. nil removes the restriction.
func (s *Session) SetMask(mask tensor.List) error {
	if s.params == nil {
		return errors.New("session is closed")
	}
	finalize(s.masks...)
	s.masks, s.frozen = nil, nil
	if mask == nil {
		return nil
	}
	out := make([]*tensors.Tensor, len(s.m.names))
	datas := make([][]float32, len(s.m.names))
	for i, name := range s.m.names {
		data := make([]float32, tensor.Size(s.m.shapes[i]))
		datas[i] = data
		if j := mask.Find(name); j >= 0 {
			t := mask[j]
			if !slices.Equal(t.Shape, s.m.shapes[i]) || len(t.Data) != len(data) {
				finalize(out[:i]...)
				return fmt.Errorf("mask %q has shape %v, want %v", name, t.Shape, s.m.shapes[i])
			}
			for k, v := range t.Data {
				if v != 0 && v != 1 {
					finalize(out[:i]...)
					return fmt.Errorf("mask %q holds %v at %d; masks are 0 or 1", name, v, k)
				}
			}
			copy(data, t.Data)
		} else {
			for k := range data {
				data[k] = 1
			}
		}
		out[i] = tensors.FromFlatDataAndDimensions(data, s.m.shapes[i]...)
	}
	for _, t := range mask {
		if !slices.Contains(s.m.names, t.Name) {
			finalize(out...)
			return fmt.Errorf("mask names %q, which is not a parameter of %s", t.Name, s.m.spec.Arch)
		}
	}
	if err := s.m.lazyExec(&s.m.masked, "train-masked", maskedTrainStepGraph); err != nil {
		finalize(out...)
		return err
	}
	if ls, ok := s.m.net.(seqNet); ok && !s.m.noFrozenSteps {
		if k := ls.frozenLayers(datas); k > 0 {
			e, err := s.m.auxExec(fmt.Sprintf("train-masked-frozen%d", k), frozenTrainStepGraph(k))
			if err != nil {
				finalize(out...)
				return err
			}
			s.frozen = e
		}
	}
	s.masks = out
	return nil
}

// SetProx adds the proximal term μ/2·‖θ − ref‖² to the loss of the following steps (ref
// matched by name; copied). μ = 0 removes it, and steps are then exactly unproximal ones.
func (s *Session) SetProx(mu float32, ref tensor.List) error {
	if s.params == nil {
		return errors.New("session is closed")
	}
	finalize(s.refs...)
	s.refs, s.mu = nil, 0
	if mu == 0 {
		return nil
	}
	refs, err := s.m.toTensors(ref)
	if err != nil {
		return fmt.Errorf("proximal reference: %w", err)
	}
	if err := s.m.lazyExec(&s.m.prox, "train-prox", proxTrainStepGraph); err != nil {
		finalize(refs...)
		return err
	}
	s.refs, s.mu = refs, mu
	return nil
}

// SetLR changes the learning rate of the following steps.
func (s *Session) SetLR(lr float32) {
	finalize(s.hyper)
	s.opt.LR = lr
	s.hyper = s.hyperTensor(false)
}

// Step runs one SGD step on a mini-batch and returns the mean cross-entropy of the batch
// before the update. x holds len(y) samples, each laid out as InputShape (NHWC for images),
// flattened row-major. Any batch size is accepted. Each new size compiles a graph once,
// except where the model pads (PadsBatches): a batch smaller than the largest one compiled so
// far runs in that graph, padded with masked rows, with the same results bit for bit.
// After an error the Session must not be used further.
func (s *Session) Step(x []float32, y []int32) (loss float32, err error) {
	if s.params == nil {
		return 0, errors.New("session is closed")
	}
	if s.m.train == nil {
		return 0, errors.New("model is closed")
	}
	rows := len(y)
	if s.m.padTrain {
		if rows > s.m.trainBatch {
			s.m.trainBatch = rows
		}
		rows = s.m.trainBatch
	}
	xt, yt, err := s.m.batchTensors(x, y, rows)
	if err != nil {
		return 0, err
	}
	defer finalize(xt, yt)
	n := len(s.params)
	args := make([]any, 0, 2*n+3)
	// Parameters and momentum are donated: the backend may update them in place.
	for _, t := range append(append([]*tensors.Tensor(nil), s.params...), s.moms...) {
		d, err := graph.DonateTensorBuffer(t, s.m.backend, 0)
		if err != nil {
			return 0, err
		}
		args = append(args, d)
	}
	exec, hyper := s.m.train, s.hyper
	if s.masks != nil || s.refs != nil {
		exec = s.m.masked
		if s.frozen != nil {
			exec = s.frozen
		}
		masks := s.masks
		if masks == nil {
			if s.ones == nil { // built once per session, not per step
				s.ones = s.onesMasks()
			}
			masks = s.ones
		}
		for _, t := range masks {
			args = append(args, t)
		}
		if s.refs != nil {
			exec = s.m.prox
			for _, t := range s.refs {
				args = append(args, t)
			}
			hyper = s.hyperTensor(true)
			defer finalize(hyper)
		}
	}
	args = append(args, xt, yt, hyper)
	outs, err := exec.Exec(args...)
	if err != nil {
		s.params, s.moms = nil, nil
		return 0, fmt.Errorf("training step: %w", err)
	}
	finalize(s.params...)
	finalize(s.moms...)
	s.params, s.moms = outs[:n], outs[n:2*n]
	lossT := outs[2*n]
	defer finalize(lossT)
	return tensors.ToScalar[float32](lossT), nil
}

// Params returns a copy of the current parameters, in canonical order.
func (s *Session) Params() (tensor.List, error) {
	if s.params == nil {
		return nil, errors.New("session is closed")
	}
	return s.m.copyOut(s.params)
}

// Momentum returns a copy of the momentum buffers, named and ordered as Params (a running
// statistic's buffer stays zero).
func (s *Session) Momentum() (tensor.List, error) {
	if s.params == nil {
		return nil, errors.New("session is closed")
	}
	return s.m.copyOut(s.moms)
}

// SetMomentum replaces the momentum buffers with bufs (matched by name, as NewSession's
// params; copied), so that training resumes an earlier session's optimizer state, as a
// PyTorch optimizer does after load_state_dict.
func (s *Session) SetMomentum(bufs tensor.List) error {
	if s.params == nil {
		return errors.New("session is closed")
	}
	ts, err := s.m.toTensors(bufs)
	if err != nil {
		return fmt.Errorf("momentum: %w", err)
	}
	finalize(s.moms...)
	s.moms = ts
	return nil
}

// copyOut copies the tensors ts, one per parameter in canonical order, into a named list.
func (m *Model) copyOut(ts []*tensors.Tensor) (tensor.List, error) {
	out := make(tensor.List, len(ts))
	for i, t := range ts {
		data, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, fmt.Errorf("copying %s: %w", m.names[i], err)
		}
		out[i] = tensor.Tensor{Name: m.names[i], Shape: append([]int(nil), m.shapes[i]...), Data: data}
	}
	return out, nil
}

// Close releases the session's buffers.
func (s *Session) Close() {
	finalize(s.params...)
	finalize(s.moms...)
	finalize(s.hyper)
	finalize(s.masks...)
	finalize(s.refs...)
	finalize(s.ones...)
	s.params, s.moms, s.hyper, s.masks, s.refs, s.ones = nil, nil, nil, nil, nil, nil
}

// onesMasks returns all-ones masks (every entry updated), for the proximal graph.
func (s *Session) onesMasks() []*tensors.Tensor {
	out := make([]*tensors.Tensor, len(s.m.shapes))
	for i, shape := range s.m.shapes {
		data := make([]float32, tensor.Size(shape))
		for k := range data {
			data[k] = 1
		}
		out[i] = tensors.FromFlatDataAndDimensions(data, shape...)
	}
	return out
}

// Gradient returns the gradient of the mean cross-entropy over the batch (x, y) with
// respect to every parameter, at params (matched by name), in canonical order. With a
// batch of one it is a per-sample gradient (Fisher-information scores square those).
func (m *Model) Gradient(params tensor.List, x []float32, y []int32) (tensor.List, error) {
	return m.GradientInto(nil, params, x, y) // nil: new buffers
}

// GradientInto is Gradient written into into's buffers, a previous result of Gradient or
// GradientInto on this model (nil or another layout: new buffers), and returns that list:
// the same bits without allocating a model's worth of gradients each batch.
func (m *Model) GradientInto(into, params tensor.List, x []float32, y []int32) (tensor.List, error) {
	if m.train == nil {
		return nil, errors.New("model is closed")
	}
	if err := m.lazyExec(&m.grad, "grad", gradGraph); err != nil {
		return nil, err
	}
	outs, err := m.execBatch(m.grad, params, x, y, true)
	if err != nil {
		return nil, fmt.Errorf("gradient: %w", err)
	}
	defer finalize(outs...)
	if !m.sameLayout(into) {
		return m.gradientOutputs(outs)
	}
	for i, t := range outs[:len(m.names)] {
		dst := into[i].Data
		if err := tensors.ConstFlatData(t, func(flat []float32) { copy(dst, flat) }); err != nil {
			return nil, err
		}
	}
	if err := m.keepBatchStats(outs[len(m.names):]); err != nil {
		return nil, err
	}
	return into, nil
}

// sameLayout reports whether l holds the model's parameters in canonical order, sized.
func (m *Model) sameLayout(l tensor.List) bool {
	if len(l) != len(m.names) {
		return false
	}
	for i, t := range l {
		if t.Name != m.names[i] || len(t.Data) != tensor.Size(m.shapes[i]) {
			return false
		}
	}
	return true
}

// SampleGradients calls fn with the gradient of each sample of the batch (x, y) in turn,
// sample by sample and tensor by tensor in canonical order (the names of Gradient's
// result): the same bits as Gradient of that sample alone, with the parameters converted
// and handed to the graph once rather than once a sample, and each gradient read in place
// rather than copied. g is valid only during the call. BatchStats is left as Gradient of
// the last sample leaves it. fn's error stops the loop and is returned.
func (m *Model) SampleGradients(params tensor.List, x []float32, y []int32, fn func(sample, t int, g []float32) error) error {
	if m.train == nil {
		return errors.New("model is closed")
	}
	if len(x) != len(y)*m.sample {
		return fmt.Errorf("batch of %d labels needs %d input values, got %d", len(y), len(y)*m.sample, len(x))
	}
	if err := m.lazyExec(&m.grad, "grad", gradGraph); err != nil {
		return err
	}
	ps, err := m.toTensors(params)
	if err != nil {
		return err
	}
	defer finalize(ps...)
	args := make([]any, len(ps)+2)
	for i, p := range ps {
		args[i] = p
	}
	n := len(m.names)
	for i := range y {
		xt, yt, err := m.batchTensors(x[i*m.sample:(i+1)*m.sample], y[i:i+1], 1)
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
		args[len(ps)], args[len(ps)+1] = xt, yt
		outs, err := m.grad.Exec(args...)
		finalize(xt, yt)
		if err != nil {
			return fmt.Errorf("gradient of sample %d: %w", i, err)
		}
		err = sampleGradientsOut(outs[:n], i, fn)
		if err == nil && i == len(y)-1 {
			err = m.keepBatchStats(outs[n:])
		}
		finalize(outs...)
		if err != nil {
			return err
		}
	}
	return nil
}

// sampleGradientsOut hands the gradient tensors of one sample to fn in order, in place.
func sampleGradientsOut(outs []*tensors.Tensor, sample int, fn func(sample, t int, g []float32) error) error {
	for t, o := range outs {
		var ferr error
		if err := tensors.ConstFlatData(o, func(flat []float32) { ferr = fn(sample, t, flat) }); err != nil {
			return err
		}
		if ferr != nil {
			return ferr
		}
	}
	return nil
}

// keepBatchStats records the new running statistics a gradient graph computed (one output
// per running statistic, in parameter order) for BatchStats.
func (m *Model) keepBatchStats(outs []*tensors.Tensor) error {
	m.batchStats = m.batchStats[:0]
	k := 0
	for i, name := range m.names {
		if !isRunningStat(name) {
			continue
		}
		if k >= len(outs) {
			return fmt.Errorf("gradient graph returned %d running statistics, want more", len(outs))
		}
		data, err := tensors.CopyFlatData[float32](outs[k])
		if err != nil {
			return err
		}
		m.batchStats = append(m.batchStats, tensor.Tensor{Name: name, Shape: append([]int(nil), m.shapes[i]...), Data: data})
		k++
	}
	return nil
}

// BatchStats returns the BatchNorm running statistics as the training-mode forward pass of
// the last Gradient or FeatureGradient call updated them (PyTorch's momentum update with
// that batch's statistics): what a compiled training step on the batch would have set.
// Methods that apply their own optimizer steps to those gradients copy them into their
// parameters. Empty for models without BatchNorm.
func (m *Model) BatchStats() tensor.List { return m.batchStats }
