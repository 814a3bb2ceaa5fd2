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

// fisherChunk is the number of samples one run of the batched squared-gradient graph
// (sqGradGraph) takes; the last chunk of a client is padded with masked rows, so one
// graph serves every client size.
const fisherChunk = 32

// SquaredGradientSum returns, per parameter in canonical order (Names), the sum over the
// samples (x, y) of the square of each sample's own gradient (the gradient of that
// sample's cross-entropy alone, as Gradient of a batch of one gives it): the numerator of
// the diagonal empirical Fisher information. For the chains of layers (cnn4, fedavgcnn,
// mlp, logreg) in im2col form it runs one compiled graph per fisherChunk samples that
// computes every sample's gradient square inside the graph (sqGradGraph): a dense layer's
// Σ_i (x_i ⊗ δ_i)² as the one product (x∘x)ᵀ(δ∘δ), a convolution's per-sample weight
// gradients as one batched product; so it equals the sum of SampleGradients' squares up to
// the order of float32 sums. Other networks (the ResNet-18s, whose BatchNorm couples the
// samples of a batch, and the native convolution form) take SampleGradients sample by
// sample. BatchStats is left unspecified.
func (m *Model) SquaredGradientSum(params tensor.List, x []float32, y []int32) ([][]float32, error) {
	if m.train == nil {
		return nil, errors.New("model is closed")
	}
	if len(x) != len(y)*m.sample {
		return nil, fmt.Errorf("batch of %d labels needs %d input values, got %d", len(y), len(y)*m.sample, len(x))
	}
	out := make([][]float32, len(m.names))
	for i, shape := range m.shapes {
		out[i] = make([]float32, tensor.Size(shape))
	}
	if len(y) == 0 {
		return out, nil
	}
	if !m.batchedFisher() {
		err := m.SampleGradients(params, x, y, func(_, t int, g []float32) error {
			o := out[t][:len(g)]
			for j, v := range g {
				o[j] += v * v
			}
			return nil
		})
		return out, err
	}
	e, err := m.auxExec("sqgrad", sqGradGraph)
	if err != nil {
		return nil, err
	}
	ps, err := m.toTensors(params)
	if err != nil {
		return nil, err
	}
	defer finalize(ps...)
	args := make([]any, len(ps)+2)
	for i, p := range ps {
		args[i] = p
	}
	for c := 0; c < len(y); c += fisherChunk {
		ce := min(c+fisherChunk, len(y))
		xt, yt, err := m.batchTensors(x[c*m.sample:ce*m.sample], y[c:ce], fisherChunk)
		if err != nil {
			return nil, fmt.Errorf("samples %d to %d: %w", c, ce, err)
		}
		args[len(ps)], args[len(ps)+1] = xt, yt
		outs, err := e.Exec(args...)
		finalize(xt, yt)
		if err != nil {
			return nil, fmt.Errorf("squared gradients of samples %d to %d: %w", c, ce, err)
		}
		for t, o := range outs {
			err = tensors.ConstFlatData(o, func(flat []float32) {
				dst := out[t][:len(flat)]
				for j, v := range flat {
					dst[j] += v
				}
			})
			if err != nil {
				break
			}
		}
		finalize(outs...)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// batchedFisher reports whether SquaredGradientSum takes the batched graph: the network is
// a chain of layers with every convolution in im2col form.
func (m *Model) batchedFisher() bool {
	ls, ok := m.net.(seqNet)
	if !ok {
		return false
	}
	for _, l := range ls {
		if l.native {
			return false
		}
	}
	return true
}

// sqGradGraph builds, for a batch (inputs = params (n), x, labels; a negative label marks a
// padding row), the sum over the batch's samples of each sample's squared gradient, one
// output per parameter. Each sample's gradient is that of its own cross-entropy (the logits'
// gradient softmax − one-hot, not divided by the batch size); the layers' input gradients
// are the plain backward pass's (the rows of a chain without BatchNorm are independent),
// and only the weight and bias gradients are formed per sample and squared.
func sqGradGraph(net network, inputs []*Node) []*Node {
	ls := net.(seqNet)
	n := net.numParams()
	params, x, labels := inputs[:n], inputs[n], inputs[n+1]
	logits, caches := forward(ls, params, x)
	g, dtype := logits.Graph(), logits.DType()
	dims := logits.Shape().Dimensions
	b, k := dims[0], dims[1]
	zero := ScalarZero(g, dtype)
	shifted := Sub(logits, Reshape(ReduceMax(logits, 1), b, 1))
	logp := Sub(shifted, Reshape(Log(ReduceSum(Exp(shifted), 1)), b, 1))
	classes := Iota(g, shapes.Make(dtypes.Int32, b, k), 1)
	oneHot := ConvertDType(Equal(classes, BroadcastToDims(Reshape(labels, b, 1), b, k)), dtype)
	valid := BroadcastToDims(Reshape(GreaterOrEqual(labels, ScalarZero(g, labels.DType())), b, 1), b, k)
	d := Where(valid, Sub(Exp(logp), oneHot), zero)
	out := make([]*Node, n)
	for i := len(ls) - 1; i >= 0; i-- {
		l, c := ls[i], caches[i]
		w := params[2*i]
		switch l.kind {
		case layerConv:
			oh, ow := l.convOut()
			kk := l.k * l.k * l.cin
			dz := poolBackward(Reshape(d, b, oh/poolSize, ow/poolSize, l.cout), l, c)
			// Per sample: dW_s = cols_sᵀ dz_s ([kk, cout]), db_s = Σ_p dz_s.
			cols := Reshape(c.in, b, oh*ow, kk)
			dzs := Reshape(dz, b, oh*ow, l.cout)
			dW := DotGeneral(cols, []int{1}, []int{0}, dzs, []int{1}, []int{0})
			out[2*i] = Reshape(ReduceSum(Mul(dW, dW), 0), l.k, l.k, l.cin, l.cout)
			dB := ReduceSum(dzs, 1)
			out[2*i+1] = ReduceSum(Mul(dB, dB), 0)
			if i > 0 {
				d = col2im(DotGeneral(dz, []int{1}, nil, c.wm, []int{1}, nil), b, l)
			}
		case layerFC:
			dz := Reshape(d, b, l.out)
			if l.relu {
				dz = Where(GreaterThan(c.z, zero), dz, zero)
			}
			// Σ_s (x_s ⊗ dz_s)² = (x∘x)ᵀ (dz∘dz).
			out[2*i] = DotGeneral(Mul(c.in, c.in), []int{0}, nil, Mul(dz, dz), []int{0}, nil)
			out[2*i+1] = ReduceSum(Mul(dz, dz), 0)
			if i > 0 {
				d = DotGeneral(dz, []int{1}, nil, w, []int{1}, nil)
			}
		}
	}
	return out
}
