package model

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model/fastcpu"
)

// SGD holds the hyper-parameters of stochastic gradient descent with PyTorch's semantics
// (torch.optim.SGD without dampening or Nesterov): for each parameter θ with gradient g,
//
//	buf = Momentum·buf + (g + WeightDecay·θ);  θ -= LR·buf
//
// with buf starting at zero.
type SGD struct{ LR, Momentum, WeightDecay float32 }

// Model holds the compiled training and evaluation graphs of one ModelSpec on one backend.
// Graphs are compiled lazily, once per distinct batch size. On fpfast, ragged batches are
// padded and masked rather than compiled for (see Session.Step and Evaluate), so a federated
// run compiles one training graph per batch size however many client sizes it sees.
//
// A Model and its Sessions are not safe for concurrent use: use them from one goroutine at a
// time (the backend already spreads each op over GOMAXPROCS threads). Close releases the
// compiled graphs; Sessions must be closed separately.
type Model struct {
	spec    ModelSpec
	backend backends.Backend
	net     network
	names   []string
	shapes  [][]int
	sample  int // Values per sample.
	train   *graph.Exec
	masked  *graph.Exec // compiled on first use of Session.SetMask
	grad    *graph.Exec // compiled on first use of Gradient
	prox    *graph.Exec // compiled on first use of Session.SetProx
	eval    *graph.Exec
	multi   *graph.Exec            // MultiSession's lockstep step, compiled on first use
	aux     map[string]*graph.Exec // features.go's graphs, compiled on first use
	logits  *graph.Exec            // compiled on first use of Logits (logits.go)
	// batchStats holds the running statistics of the last gradient call (BatchStats).
	batchStats tensor.List
	// padTrain: a training batch smaller than trainBatch, the largest one compiled so far,
	// is padded to it with masked rows (exact on fpfast for networks without BatchNorm).
	padTrain   bool
	trainBatch int
	// multiBatch is the largest per-client batch a MultiSession step has seen: every lockstep
	// step is padded to it.
	multiBatch int
	// padEval: Evaluate, Logits and Features run in chunks of evalChunk rows whatever the
	// caller's batch, the last chunk padded with masked rows; Evaluate's graph returns
	// per-sample values that are summed here in the graph's order (see evaluateChunked).
	padEval bool
	// padX and padY are the scratch buffers of padded batches.
	padX []float32
	padY []int32
	// compiles counts, per graph name, the graphs compiled (one per distinct input shape).
	compiles map[string]int
	// config and pad are newModel's arguments, for FrozenBN's sibling model.
	config string
	pad    bool
	// frozen is the sibling model with BatchNorm frozen in training (FrozenBN), made on
	// first use and closed with this one.
	frozen *Model
}

// evalChunk is the number of rows the evaluation graphs run at once where the model pads
// (padEval): one compiled graph serves every batch size, and a pass wastes fewer than
// evalChunk padding rows.
const evalChunk = 64

// NewModel prepares spec on the named backend (a configuration as accepted by
// ResolveBackend; "" means the default resolution).
func NewModel(backend string, spec ModelSpec) (*Model, error) {
	return newModel(backend, spec, true)
}

// newModel is NewModel; with pad false the model never pads (one graph per batch size, as
// on backends other than fpfast), which tests compare padding against.
func newModel(backend string, spec ModelSpec, pad bool) (*Model, error) {
	net, err := spec.network()
	if err != nil {
		return nil, err
	}
	names, shapes, err := spec.ParamShapes()
	if err != nil {
		return nil, err
	}
	b, err := getBackend(backend)
	if err != nil {
		return nil, err
	}
	m := &Model{spec: spec, backend: b, net: net, names: names, shapes: shapes, sample: tensor.Size(spec.InputShape),
		compiles: map[string]int{}, config: backend, pad: pad}
	// Padding is exact only where every reduction over the batch takes its terms in order
	// from a +0 start (fpfast's GEMM and ReduceSum; simplego's own may block by size), and,
	// in training, where no batch statistic (BatchNorm) sees the padding rows. XLA pads too:
	// a compilation there costs seconds, and its results are its own (see BackendID) and,
	// padded or not, equal to the unpadded ones up to the order of its sums.
	if pad && (b.Name() == fastcpu.Name || b.Name() == xlaName) {
		m.padEval = true
		_, seq := net.(seqNet)
		m.padTrain = seq
	}
	m.train, err = graph.NewExec(b, func(inputs []*graph.Node) []*graph.Node {
		m.compiles["train"]++
		return trainStepGraph(net, inputs)
	})
	if err != nil {
		return nil, err
	}
	evalBuild := evalGraph
	if m.padEval {
		evalBuild = evalRowsGraph
	}
	m.eval, err = graph.NewExec(b, func(inputs []*graph.Node) []*graph.Node {
		m.compiles["eval"]++
		return evalBuild(net, inputs)
	})
	if err != nil {
		m.train.Finalize()
		return nil, err
	}
	// One compiled graph per batch size (see padTrain, padEval).
	m.train.SetMaxCache(-1).WithName("fedpipe-train-" + spec.Arch)
	m.eval.SetMaxCache(-1).WithName("fedpipe-eval-" + spec.Arch)
	return m, nil
}

// Spec returns the model's specification.
func (m *Model) Spec() ModelSpec { return m.spec }

// HasBatchNorm reports whether the network has BatchNorm layers.
func (m *Model) HasBatchNorm() bool {
	if tn, ok := m.net.(tapeNetwork); ok {
		for _, d := range tn.net.defs {
			if d.runningStats {
				return true
			}
		}
	}
	return false
}

// FrozenBN returns the model of the same spec with BatchNorm frozen in training
// (ModelSpec.FrozenBN): m itself when its spec freezes already or the network has no
// BatchNorm, otherwise a sibling made on first use on the same backend, which Close
// closes with m. Like m, it is not safe for concurrent use, nor alongside m.
func (m *Model) FrozenBN() (*Model, error) {
	if m.spec.FrozenBN || !m.HasBatchNorm() {
		return m, nil
	}
	if m.frozen == nil {
		spec := m.spec
		spec.FrozenBN = true
		f, err := newModel(m.config, spec, m.pad)
		if err != nil {
			return nil, err
		}
		m.frozen = f
	}
	return m.frozen, nil
}

// Compilations returns how many graphs the model has compiled, by graph name ("train",
// "eval", "train-masked", "grad", ...): one per distinct input shape each graph was run with.
func (m *Model) Compilations() map[string]int {
	out := make(map[string]int, len(m.compiles))
	for k, v := range m.compiles {
		out[k] = v
	}
	return out
}

// PadsBatches reports whether ragged training batches are padded to the compiled batch size
// rather than compiled for (fpfast, networks without BatchNorm).
func (m *Model) PadsBatches() bool { return m.padTrain }

// padded returns x and y padded to rows samples: zero inputs and label −1, the padding mark
// crossEntropy masks out. The slices are the model's scratch buffers, valid until the next
// call.
func (m *Model) padded(x []float32, y []int32, rows int) ([]float32, []int32) {
	if cap(m.padX) < rows*m.sample {
		m.padX = make([]float32, rows*m.sample)
	}
	if cap(m.padY) < rows {
		m.padY = make([]int32, rows)
	}
	px, py := m.padX[:rows*m.sample], m.padY[:rows]
	clear(px[copy(px, x):])
	for i := copy(py, y); i < rows; i++ {
		py[i] = -1
	}
	return px, py
}

// Close releases the compiled graphs. The Model must not be used afterwards.
func (m *Model) Close() {
	if m.train != nil {
		m.train.Finalize()
		m.eval.Finalize()
		for _, e := range []*graph.Exec{m.masked, m.grad, m.prox} {
			if e != nil {
				e.Finalize()
			}
		}
		m.train, m.eval, m.masked, m.grad, m.prox = nil, nil, nil, nil, nil
	}
	// Compiled on their own first use, possibly without any training graph.
	if m.logits != nil {
		m.logits.Finalize()
		m.logits = nil
	}
	if m.multi != nil {
		m.multi.Finalize()
		m.multi = nil
	}
	for _, e := range m.aux {
		e.Finalize()
	}
	m.aux = nil
	if m.frozen != nil {
		m.frozen.Close()
		m.frozen = nil
	}
}

// toTensors converts parameters (any order, matched by name) to backend tensors, in
// canonical order.
func (m *Model) toTensors(params tensor.List) ([]*tensors.Tensor, error) {
	ordered, err := m.spec.orderParams(params)
	if err != nil {
		return nil, err
	}
	out := make([]*tensors.Tensor, len(ordered))
	for i, p := range ordered {
		out[i] = tensors.FromFlatDataAndDimensions(p.Data, p.Shape...) // Copies.
	}
	return out, nil
}

// batchTensors validates one batch and converts it to tensors, padded to rows samples (see
// padded) when rows exceeds the batch.
func (m *Model) batchTensors(x []float32, y []int32, rows int) (*tensors.Tensor, *tensors.Tensor, error) {
	b := len(y)
	if b == 0 {
		return nil, nil, errors.New("empty batch")
	}
	if len(x) != b*m.sample {
		return nil, nil, fmt.Errorf("batch of %d labels needs %d input values (%d per sample, shape %v), got %d",
			b, b*m.sample, m.sample, m.spec.InputShape, len(x))
	}
	for i, label := range y {
		if label < 0 || int(label) >= m.spec.NumClasses {
			return nil, nil, fmt.Errorf("label %d of sample %d outside [0, %d)", label, i, m.spec.NumClasses)
		}
	}
	if rows > b {
		x, y = m.padded(x, y, rows)
		b = rows
	}
	dims := append([]int{b}, m.spec.InputShape...)
	return tensors.FromFlatDataAndDimensions(x, dims...), tensors.FromFlatDataAndDimensions(y, b), nil
}

// finalize frees tensors, ignoring nil ones.
func finalize(ts ...*tensors.Tensor) {
	for _, t := range ts {
		if t != nil {
			_ = t.FinalizeAll()
		}
	}
}

// Session is one client's local training: current parameters and momentum buffers, kept on
// the backend between steps. Use it from one goroutine at a time.
type Session struct {
	m      *Model
	params []*tensors.Tensor
	moms   []*tensors.Tensor
	masks  []*tensors.Tensor // nil: every entry is updated
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
	s.masks = nil
	if mask == nil {
		return nil
	}
	out := make([]*tensors.Tensor, len(s.m.names))
	for i, name := range s.m.names {
		data := make([]float32, tensor.Size(s.m.shapes[i]))
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
	out := make(tensor.List, len(s.params))
	for i, t := range s.params {
		data, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, fmt.Errorf("copying %s: %w", s.m.names[i], err)
		}
		out[i] = tensor.Tensor{Name: s.m.names[i], Shape: append([]int(nil), s.m.shapes[i]...), Data: data}
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

// Evaluate runs the model with params on the samples (x, y), batch at a time (the last
// batch may be smaller), and returns the sum over samples of the cross-entropy loss (so
// sumLoss/len(y) is the mean) and the number of samples whose argmax prediction (first
// maximum on ties) equals the label. Per-batch sums are computed in float32 and accumulated
// in float64.
func (m *Model) Evaluate(params tensor.List, x []float32, y []int32, batch int) (sumLoss float64, correct int, err error) {
	if m.eval == nil {
		return 0, 0, errors.New("model is closed")
	}
	if batch <= 0 {
		return 0, 0, fmt.Errorf("evaluation batch size must be positive, got %d", batch)
	}
	if len(x) != len(y)*m.sample {
		return 0, 0, fmt.Errorf("%d labels need %d input values, got %d", len(y), len(y)*m.sample, len(x))
	}
	ps, err := m.toTensors(params)
	if err != nil {
		return 0, 0, err
	}
	defer finalize(ps...)
	if m.padEval {
		return m.evaluateChunked(ps, x, y, batch)
	}
	for start := 0; start < len(y); start += batch {
		end := min(start+batch, len(y))
		xt, yt, err := m.batchTensors(x[start*m.sample:end*m.sample], y[start:end], end-start)
		if err != nil {
			return 0, 0, err
		}
		args := make([]any, 0, len(ps)+2)
		for _, p := range ps {
			args = append(args, p)
		}
		args = append(args, xt, yt)
		outs, err := m.eval.Exec(args...)
		finalize(xt, yt)
		if err != nil {
			return 0, 0, fmt.Errorf("evaluation: %w", err)
		}
		sumLoss += float64(tensors.ToScalar[float32](outs[0]))
		correct += int(tensors.ToScalar[int32](outs[1]))
		finalize(outs...)
	}
	return sumLoss, correct, nil
}

// evaluateChunked is Evaluate on a padding model: the samples run through the evaluation
// graph evalChunk rows at a time whatever the batch (the last chunk padded), and each batch's
// per-sample losses are summed in float32 in sample order from +0, as evalGraph's
// ReduceAllSum does on fpfast, so the result is the same, bit for bit, as one graph per batch
// size would give.
func (m *Model) evaluateChunked(ps []*tensors.Tensor, x []float32, y []int32, batch int) (sumLoss float64, correct int, err error) {
	losses := make([]float32, 0, len(y))
	args := make([]any, 0, len(ps)+2)
	for c := 0; c < len(y); c += evalChunk {
		ce := min(c+evalChunk, len(y))
		xt, yt, err := m.batchTensors(x[c*m.sample:ce*m.sample], y[c:ce], evalChunk)
		if err != nil {
			return 0, 0, err
		}
		args = args[:0]
		for _, p := range ps {
			args = append(args, p)
		}
		outs, err := m.eval.Exec(append(args, xt, yt)...)
		finalize(xt, yt)
		if err != nil {
			return 0, 0, fmt.Errorf("evaluation: %w", err)
		}
		l, err := tensors.CopyFlatData[float32](outs[0])
		var hits []int32
		if err == nil {
			hits, err = tensors.CopyFlatData[int32](outs[1])
		}
		finalize(outs...)
		if err != nil {
			return 0, 0, err
		}
		losses = append(losses, l[:ce-c]...)
		for _, h := range hits[:ce-c] {
			correct += int(h)
		}
	}
	for start := 0; start < len(losses); start += batch {
		var sum float32
		for _, l := range losses[start:min(start+batch, len(losses))] {
			sum += l
		}
		sumLoss += float64(sum)
	}
	return sumLoss, correct, nil
}

// Gradient returns the gradient of the mean cross-entropy over the batch (x, y) with
// respect to every parameter, at params (matched by name), in canonical order. With a
// batch of one it is a per-sample gradient (Fisher-information scores square those).
func (m *Model) Gradient(params tensor.List, x []float32, y []int32) (tensor.List, error) {
	if m.train == nil {
		return nil, errors.New("model is closed")
	}
	if err := m.lazyExec(&m.grad, "grad", gradGraph); err != nil {
		return nil, err
	}
	ps, err := m.toTensors(params)
	if err != nil {
		return nil, err
	}
	defer finalize(ps...)
	xt, yt, err := m.batchTensors(x, y, len(y))
	if err != nil {
		return nil, err
	}
	defer finalize(xt, yt)
	args := make([]any, 0, len(ps)+2)
	for _, p := range ps {
		args = append(args, p)
	}
	outs, err := m.grad.Exec(append(args, xt, yt)...)
	if err != nil {
		return nil, fmt.Errorf("gradient: %w", err)
	}
	defer finalize(outs...)
	n := len(m.names)
	out := make(tensor.List, n)
	for i, t := range outs[:n] {
		data, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, err
		}
		out[i] = tensor.Tensor{Name: m.names[i], Shape: append([]int(nil), m.shapes[i]...), Data: data}
	}
	if err := m.keepBatchStats(outs[n:]); err != nil {
		return nil, err
	}
	return out, nil
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

// lazyExec compiles build into *slot on first use (one graph per batch size, cached).
func (m *Model) lazyExec(slot **graph.Exec, name string, build func(network, []*graph.Node) []*graph.Node) error {
	if *slot != nil {
		return nil
	}
	net := m.net
	e, err := graph.NewExec(m.backend, func(inputs []*graph.Node) []*graph.Node {
		m.compiles[name]++
		return build(net, inputs)
	})
	if err != nil {
		return err
	}
	e.SetMaxCache(-1).WithName("fedpipe-" + name + "-" + m.spec.Arch)
	*slot = e
	return nil
}
