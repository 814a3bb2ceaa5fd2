package model

import (
	"errors"
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/gomlx"
	"github.com/fedpipe/fedpipe/gomlx/fastcpu"
)

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
	// noFrozenSteps keeps Session.SetMask on the masked step even where its masks freeze
	// whole leading layers (tests compare the two).
	noFrozenSteps bool
	// multiBatch is the largest per-client batch a MultiSession step has seen: every lockstep
	// step is padded to it.
	multiBatch int
	// gatherCol2im: the lockstep step takes col2im as a Gather and a ReduceSum
	// (multiCol2im with gather), as on XLA, rather than a ScatterSum. (Unused where
	// nativeConv: native convolutions have no col2im.)
	gatherCol2im bool
	// nativeConv: the convolution layers take the native graph form (native.go: XLA's
	// convolution and reduce-window), as on the XLA backends, instead of im2col.
	nativeConv bool
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
	return newModelForm(backend, spec, pad, usesXLA(backend))
}

// newModelForm is newModel with the convolution layers' graph form chosen: native (the XLA
// backends' form, native.go) or im2col (fpfast's and fpcpu's). Tests run the native form on
// fpcpu, which has the ops it needs (package cpubackend).
func newModelForm(backend string, spec ModelSpec, pad, native bool) (*Model, error) {
	net, err := spec.network()
	if err != nil {
		return nil, err
	}
	if native {
		net = nativeConvs(net)
	}
	names, shapes, err := spec.ParamShapes()
	if err != nil {
		return nil, err
	}
	b, err := gomlx.Get(backend)
	if err != nil {
		return nil, err
	}
	m := &Model{spec: spec, backend: b, net: net, names: names, shapes: shapes, sample: tensor.Size(spec.InputShape),
		compiles: map[string]int{}, config: backend, pad: pad, gatherCol2im: usesXLA(backend), nativeConv: native}
	// Padding is exact only where every reduction over the batch takes its terms in order
	// from a +0 start (fpfast's GEMM and ReduceSum; simplego's own may block by size), and,
	// in training, where no batch statistic (BatchNorm) sees the padding rows. XLA pads too:
	// a compilation there costs seconds, and its results are its own (see BackendID) and,
	// padded or not, equal to the unpadded ones up to the order of its sums.
	if pad && (b.Name() == fastcpu.Name || b.Name() == gomlx.XLA) {
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

// Backend returns the backend configuration the model was prepared on (NewModel's).
func (m *Model) Backend() string { return m.config }

// Names lists the parameters in canonical order: the order of Gradient's result and of
// SampleGradients' tensors.
func (m *Model) Names() []string { return append([]string(nil), m.names...) }

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
		f, err := newModelForm(m.config, spec, m.pad, m.nativeConv)
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
