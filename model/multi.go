package model

import (
	"errors"
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// Client-batched ("lockstep") training: several clients' SGD steps in one compiled graph,
// with a leading client axis on parameters, momentum buffers, inputs and labels. Each
// client's matrix products are the same GEMMs as its own Session's (a batched DotGeneral runs
// one per client), every other op is per sample or per client, and padding rows (label −1)
// and idle clients are masked exactly, so a MultiSession gives every client the parameters
// its own Session would, bit for bit (TestMultiSessionMatchesSessions). It needs a model that
// pads (PadsBatches: fpfast or xla, a network without BatchNorm). The federated loop uses it
// on XLA (stages/train's lockstep group).

// multiForward is forward with a client axis: params [C, shape...], x [C, B, input...].
// It returns the logits [C·B, classes] and the caches (conv caches hold [C, B·oh·ow, kk]
// columns; fc caches [C, B, in] inputs and [C, B, out] pre-activations). Native conv layers
// (XLA, native.go) run as one grouped convolution of the clients' images side by side in
// the channels, [B, h, w, C·c], a layout kept from one conv layer to the next.
func multiForward(ls []layer, params []*Node, x *Node, clients int) (*Node, []layerCache) {
	cb := x.Shape().Dimensions[0] * x.Shape().Dimensions[1]
	b := cb / clients
	caches := make([]layerCache, len(ls))
	h := x
	grouped := false // h is [B, h, w, C·c] (native conv layers' layout), not client-major
	for i, l := range ls {
		w, bias := params[2*i], params[2*i+1]
		switch l.kind {
		case layerConv:
			if l.native {
				if !grouped {
					h = toGrouped(h, clients, b, l.h, l.w, l.cin)
				}
				h, caches[i] = nativeConvForward(h, w, bias, l, clients)
				grouped = true
				continue
			}
			oh, ow := l.convOut()
			kk := l.k * l.k * l.cin
			cols := multiIm2col(h, clients, b, l, oh, ow)
			z := DotGeneral(cols, []int{2}, []int{0}, Reshape(w, clients, kk, l.cout), []int{1}, []int{0})
			z = Add(z, Reshape(bias, clients, 1, l.cout))
			h, caches[i] = poolForward(Reshape(z, cb*oh*ow, l.cout), cb, clients, l)
			caches[i].in = cols
		case layerFC:
			if grouped {
				h, grouped = fromGrouped(h, clients), false
			}
			in := Reshape(h, clients, b, l.in)
			z := DotGeneral(in, []int{2}, []int{0}, w, []int{1}, []int{0})
			z = Add(z, Reshape(bias, clients, 1, l.out))
			caches[i] = layerCache{in: in, z: z}
			h = z
			if l.relu {
				h = Max(z, ScalarZero(x.Graph(), x.DType()))
			}
		}
	}
	return Reshape(h, cb, ls[len(ls)-1].out), caches
}

// multiIm2col is im2col of every client's batch of B images h [C·B, ...] at once: [C,
// B·oh·ow, k·k·cin]. The clients are moved beside the channels first ([B, h, w, C·cin]), so
// one Gather of C·cin-element pixel rows at the indices of a single batch of B takes every
// client's patches: the same values as im2col of each client's batch, with a constant that
// does not grow with C (as the C·B batch's indices did: 100 clients' 5.1 million indices took
// XLA ~10 s to constant-fold, docs/gpus.md).
func multiIm2col(h *Node, clients, b int, l layer, oh, ow int) *Node {
	x := TransposeAllAxes(Reshape(h, clients, b, l.h, l.w, l.cin), 1, 2, 3, 0, 4)
	rows := Gather(padRows(Reshape(x, b*l.h*l.w, clients*l.cin), l.pad), Const(h.Graph(), im2colIndices(b, l.h, l.w, l.k, l.pad, oh, ow)))
	cols := TransposeAllAxes(Reshape(rows, b*oh*ow, l.k*l.k, clients, l.cin), 2, 0, 1, 3)
	return Reshape(cols, clients, b*oh*ow, l.k*l.k*l.cin)
}

// multiCol2im is col2im of every client's dCols [C, B·oh·ow, k·k·cin] at once, [C·B, h, w,
// cin], with the clients beside the channels as in multiIm2col. By default it is one
// ScatterSum of C·cin-element rows at a single batch's indices, so each client's pixel adds
// its contributions in the order its own Session's col2im does. With gather (XLA's form,
// Model.gatherCol2im), every pixel gathers the rows of dCols that im2col took from it (at
// most k·k, in that same order; a missing one reads an appended zero row) and one ReduceSum
// adds them: a GPU runs a ScatterSum whose indices repeat with atomic additions, or, as
// fedpipe asks of XLA for bits that do not change from run to run
// (--xla_gpu_deterministic_ops), without them by sorting; a Gather and a ReduceSum need
// neither. That sum is the same in the order XLA's ReduceSum takes, not the ScatterSum's
// bits, which is why the XLA backends' ids carry LockstepCodeVersion. Either constant is one
// batch's.
func multiCol2im(dCols *Node, clients, b int, l layer, gather bool) *Node {
	oh, ow := l.convOut()
	rows := TransposeAllAxes(Reshape(dCols, clients, b*oh*ow, l.k*l.k, l.cin), 1, 2, 0, 3)
	rows = Reshape(rows, b*oh*ow*l.k*l.k, clients*l.cin)
	g := dCols.Graph()
	var sum *Node
	if gather {
		idx, slots := col2imGatherIndices(b, l.h, l.w, l.k, l.pad, oh, ow)
		sum = ReduceSum(Reshape(Gather(withZeroRow(rows), Const(g, idx)), b*l.h*l.w, slots, clients*l.cin), 1)
	} else {
		sum = scatterPixels(rows, b, l)
	}
	return Reshape(TransposeAllAxes(Reshape(sum, b, l.h, l.w, clients, l.cin), 3, 0, 1, 2, 4), clients*b, l.h, l.w, l.cin)
}

// col2imGatherIndices inverts im2colIndices: for each of the b·h·w pixels, the rows of
// im2col's [b·oh·ow·k·k] (one per patch entry) that copied it, in increasing order, then
// the zero row b·oh·ow·k·k for the slots it has fewer than slots = k·k of:
// [b·h·w·slots, 1] int32. Rows im2col took from the padding are in no pixel's list.
func col2imGatherIndices(b, h, w, k, pad, oh, ow int) (*tensors.Tensor, int) {
	src := im2colIndexList(b, h, w, k, pad, oh, ow)
	slots := k * k
	zero := int32(len(src))
	idx := make([]int32, b*h*w*slots)
	for i := range idx {
		idx[i] = zero
	}
	used := make([]int, b*h*w)
	for r, px := range src {
		if int(px) == b*h*w { // the padding's zero row
			continue
		}
		idx[int(px)*slots+used[px]] = int32(r)
		used[px]++
	}
	return tensors.FromFlatDataAndDimensions(idx, len(idx), 1), slots
}

// multiBackward is backward with a client axis; dLogits is [C·B, classes]. gatherCol2im:
// the input gradients' col2im gathers rather than scatters (multiCol2im; im2col form on
// XLA). Native conv layers take nativeConvBackward, grouped by client.
func multiBackward(ls []layer, params []*Node, caches []layerCache, dLogits *Node, clients int, gatherCol2im bool) []*Node {
	g, dtype := dLogits.Graph(), dLogits.DType()
	cb := dLogits.Shape().Dimensions[0]
	b := cb / clients
	zero := ScalarZero(g, dtype)
	grads := make([]*Node, len(params))
	d := dLogits
	grouped := false // d is [B, h, w, C·c] (native conv layers' layout)
	for i := len(ls) - 1; i >= 0; i-- {
		l, c := ls[i], caches[i]
		w := params[2*i]
		switch l.kind {
		case layerConv:
			oh, ow := l.convOut()
			if l.native {
				if !grouped {
					d = toGrouped(d, clients, b, oh/poolSize, ow/poolSize, l.cout)
				}
				grads[2*i], grads[2*i+1], d = nativeConvBackward(d, w, l, c, clients, i > 0)
				grouped = true
				continue
			}
			kk := l.k * l.k * l.cin
			dz := Reshape(poolBackward(Reshape(d, cb, oh/poolSize, ow/poolSize, l.cout), l, c),
				clients, b*oh*ow, l.cout)
			grads[2*i] = Reshape(DotGeneral(c.in, []int{1}, []int{0}, dz, []int{1}, []int{0}), clients, l.k, l.k, l.cin, l.cout)
			grads[2*i+1] = ReduceSum(dz, 1)
			if i > 0 {
				dCols := DotGeneral(dz, []int{2}, []int{0}, Reshape(w, clients, kk, l.cout), []int{2}, []int{0})
				d = multiCol2im(dCols, clients, b, l, gatherCol2im)
			}
		case layerFC:
			dz := Reshape(d, clients, b, l.out)
			if l.relu {
				dz = Where(GreaterThan(c.z, zero), dz, zero)
			}
			grads[2*i] = DotGeneral(c.in, []int{1}, []int{0}, dz, []int{1}, []int{0})
			grads[2*i+1] = ReduceSum(dz, 1)
			if i > 0 {
				d = DotGeneral(dz, []int{2}, []int{0}, w, []int{2}, []int{0})
			}
		}
	}
	return grads
}

// multiTrainStepGraph builds one lockstep SGD step of C clients: inputs = params (n, each
// [C, shape...]), momentum buffers (n), x [C, B, input...], labels [C, B] (−1: padding), hyper
// [lr, momentum, weight decay]; outputs = new params (n), new momentum (n), losses [C]. A
// client whose batch is all padding (idle: it has no batch this step) keeps its parameters
// and momentum exactly. gatherCol2im: see multiBackward.
func multiTrainStepGraph(ls []layer, inputs []*Node, gatherCol2im bool) []*Node {
	n := 2 * len(ls)
	params, moms := inputs[:n], inputs[n:2*n]
	x, labels, hyper := inputs[2*n], inputs[2*n+1], inputs[2*n+2]
	g, dtype := x.Graph(), x.DType()
	clients, b := labels.Shape().Dimensions[0], labels.Shape().Dimensions[1]
	logits, caches := multiForward(ls, params, x, clients)
	// crossEntropy's operations on all C·B rows, with each client's own sample count.
	cb := clients * b
	k := logits.Shape().Dimensions[1]
	zero := ScalarZero(g, dtype)
	flat := Reshape(labels, cb)
	valid := GreaterOrEqual(flat, ScalarZero(g, labels.DType()))
	count := ReduceSum(ConvertDType(Reshape(valid, clients, b), dtype), 1) // [C]
	shifted := Sub(logits, Reshape(ReduceMax(logits, 1), cb, 1))
	lse := Log(ReduceSum(Exp(shifted), 1))
	logp := Sub(shifted, Reshape(lse, cb, 1))
	classes := Iota(g, shapes.Make(dtypes.Int32, cb, k), 1)
	oneHot := ConvertDType(Equal(classes, BroadcastToDims(Reshape(flat, cb, 1), cb, k)), dtype)
	perSample := Where(valid, Neg(ReduceSum(Mul(oneHot, logp), 1)), zero)
	validRows := BroadcastToDims(Reshape(valid, cb, 1), cb, k)
	countRows := Reshape(BroadcastToDims(Reshape(count, clients, 1, 1), clients, b, k), cb, k)
	dLogits := Where(validRows, Div(Sub(Exp(logp), oneHot), countRows), zero)
	losses := Div(ReduceSum(Reshape(perSample, clients, b), 1), count)
	grads := multiBackward(ls, params, caches, dLogits, clients, gatherCol2im)
	active := GreaterThan(count, zero) // [C]
	lr := Reshape(Slice(hyper, AxisElem(0)))
	mom := Reshape(Slice(hyper, AxisElem(1)))
	wd := Reshape(Slice(hyper, AxisElem(2)))
	outs := make([]*Node, 0, 2*n+1)
	newMoms := make([]*Node, n)
	for i, p := range params {
		dims := p.Shape().Dimensions
		on := BroadcastToDims(Reshape(active, append([]int{clients}, ones(len(dims)-1)...)...), dims...)
		d := Add(grads[i], Mul(wd, p))
		m := Add(Mul(mom, moms[i]), d)
		newMoms[i] = Where(on, m, moms[i])
		outs = append(outs, Where(on, Sub(p, Mul(lr, m)), p))
	}
	outs = append(outs, newMoms...)
	return append(outs, losses)
}

// ones returns n ones.
func ones(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// MultiSession trains several clients in lockstep: one compiled step advances every client
// that has a batch. Its graphs belong to the Model (one per client count and batch size), so
// a new MultiSession of a size seen before compiles nothing. Use a Model's MultiSessions from
// one goroutine at a time.
type MultiSession struct {
	m       *Model
	clients int
	params  []*tensors.Tensor // each [C, shape...]
	moms    []*tensors.Tensor
	hyper   *tensors.Tensor
}

// NewMultiSession starts lockstep training of len(params) clients, client i from params[i]
// (matched by name; copied), with the same optimizer settings; momentum buffers start at
// zero. It needs a model that pads (PadsBatches).
func (m *Model) NewMultiSession(params []tensor.List, opt SGD) (*MultiSession, error) {
	if m.train == nil {
		return nil, errors.New("model is closed")
	}
	ls, ok := m.net.(seqNet)
	if !ok || !m.padTrain {
		return nil, fmt.Errorf("lockstep training needs a backend that pads batches (%s or xla) and a network without BatchNorm (model %s)", CPUBackend, m.spec.Arch)
	}
	if len(params) == 0 {
		return nil, errors.New("lockstep training needs at least one client")
	}
	c := len(params)
	s := &MultiSession{m: m, clients: c}
	for i, shape := range m.shapes {
		size := tensor.Size(shape)
		data := make([]float32, c*size)
		for ci, p := range params {
			ordered, err := m.spec.orderParams(p)
			if err != nil {
				return nil, fmt.Errorf("client %d: %w", ci, err)
			}
			copy(data[ci*size:], ordered[i].Data)
		}
		dims := append([]int{c}, shape...)
		s.params = append(s.params, tensors.FromFlatDataAndDimensions(data, dims...))
		s.moms = append(s.moms, tensors.FromFlatDataAndDimensions(make([]float32, c*size), dims...))
	}
	s.hyper = tensors.FromFlatDataAndDimensions([]float32{opt.LR, opt.Momentum, opt.WeightDecay}, 3)
	if m.multi == nil {
		var err error
		m.multi, err = NewExec(m.backend, func(inputs []*Node) []*Node {
			m.compiles["train-multi"]++
			return multiTrainStepGraph(ls, inputs, m.gatherCol2im)
		})
		if err != nil {
			s.Close()
			return nil, err
		}
		m.multi.SetMaxCache(-1).WithName("fedpipe-train-multi-" + m.spec.Arch)
	}
	return s, nil
}

// Step runs one SGD step for every client i with a batch (x[i], y[i]) (len(y[i]) samples,
// laid out as in Session.Step); a client with an empty batch is idle and keeps its state.
// Every step runs at the largest batch the Model's lockstep steps have seen, padded.
// It returns each client's mean loss before the update (NaN for idle clients). After an
// error the MultiSession must not be used further.
func (s *MultiSession) Step(x [][]float32, y [][]int32) ([]float32, error) {
	if s.params == nil {
		return nil, errors.New("session is closed")
	}
	if len(x) != s.clients || len(y) != s.clients {
		return nil, fmt.Errorf("lockstep step of %d clients got %d inputs and %d label sets", s.clients, len(x), len(y))
	}
	m := s.m
	for ci := range y {
		if len(x[ci]) != len(y[ci])*m.sample {
			return nil, fmt.Errorf("client %d: %d labels need %d input values, got %d", ci, len(y[ci]), len(y[ci])*m.sample, len(x[ci]))
		}
		for i, label := range y[ci] {
			if label < 0 || int(label) >= m.spec.NumClasses {
				return nil, fmt.Errorf("client %d: label %d of sample %d outside [0, %d)", ci, label, i, m.spec.NumClasses)
			}
		}
		m.multiBatch = max(m.multiBatch, len(y[ci]))
	}
	b := m.multiBatch
	xs := make([]float32, s.clients*b*m.sample)
	ys := make([]int32, s.clients*b)
	for ci := range y {
		copy(xs[ci*b*m.sample:], x[ci])
		for i := range b {
			ys[ci*b+i] = -1
		}
		copy(ys[ci*b:], y[ci])
	}
	xt := tensors.FromFlatDataAndDimensions(xs, append([]int{s.clients, b}, m.spec.InputShape...)...)
	yt := tensors.FromFlatDataAndDimensions(ys, s.clients, b)
	defer finalize(xt, yt)
	n := len(s.params)
	args := make([]any, 0, 2*n+3)
	for _, t := range append(append([]*tensors.Tensor(nil), s.params...), s.moms...) {
		d, err := DonateTensorBuffer(t, m.backend, 0)
		if err != nil {
			return nil, err
		}
		args = append(args, d)
	}
	outs, err := m.multi.Exec(append(args, xt, yt, s.hyper)...)
	if err != nil {
		s.params, s.moms = nil, nil
		return nil, fmt.Errorf("lockstep training step: %w", err)
	}
	finalize(s.params...)
	finalize(s.moms...)
	s.params, s.moms = outs[:n], outs[n:2*n]
	defer finalize(outs[2*n])
	return tensors.CopyFlatData[float32](outs[2*n])
}

// Params returns a copy of every client's current parameters, in canonical order.
func (s *MultiSession) Params() ([]tensor.List, error) {
	if s.params == nil {
		return nil, errors.New("session is closed")
	}
	out := make([]tensor.List, s.clients)
	for i, t := range s.params {
		data, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, err
		}
		size := tensor.Size(s.m.shapes[i])
		for ci := range out {
			out[ci] = append(out[ci], tensor.Tensor{Name: s.m.names[i], Shape: append([]int(nil), s.m.shapes[i]...),
				Data: append([]float32(nil), data[ci*size:(ci+1)*size]...)})
		}
	}
	return out, nil
}

// Close releases the session's buffers and its compiled graphs.
func (s *MultiSession) Close() {
	finalize(s.params...)
	finalize(s.moms...)
	finalize(s.hyper)
	s.params, s.moms, s.hyper = nil, nil, nil
}
