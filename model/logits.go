package model

import (
	"errors"
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// logitsGraph builds the forward pass alone: inputs = params (n), x; output = the logits
// [B, classes].
func logitsGraph(net network, inputs []*graph.Node) []*graph.Node {
	n := net.numParams()
	return []*graph.Node{net.evalLogits(inputs[:n], inputs[n])}
}

// Logits runs the model with params on the samples x, batch at a time, and returns the
// logits, row-major [samples, NumClasses]. It is the same forward pass Evaluate scores.
func (m *Model) Logits(params tensor.List, x []float32, batch int) ([]float32, error) {
	if m.eval == nil {
		return nil, errors.New("model is closed")
	}
	if err := m.checkBatches(x, batch); err != nil {
		return nil, fmt.Errorf("forward pass: %w", err)
	}
	if err := m.lazyExec(&m.logits, "logits", logitsGraph); err != nil {
		return nil, err
	}
	return m.batched(m.logits, params, x, batch, m.spec.NumClasses, "forward pass")
}

// checkBatches validates the inputs of a batched pass.
func (m *Model) checkBatches(x []float32, batch int) error {
	if batch <= 0 {
		return fmt.Errorf("batch size must be positive, got %d", batch)
	}
	if len(x)%m.sample != 0 {
		return fmt.Errorf("%d input values are not a whole number of samples of %d", len(x), m.sample)
	}
	return nil
}

// batched runs exec (inputs: params, x) on the samples x, batch at a time, and returns its
// first output for every sample, width values each, row-major; what names it in errors.
// exec must compute each row from that row's input alone: on a padding model the samples
// run evalChunk at a time, the last chunk padded, and the padding rows' outputs are dropped.
func (m *Model) batched(exec *graph.Exec, params tensor.List, x []float32, batch, width int, what string) ([]float32, error) {
	ps, err := m.toTensors(params)
	if err != nil {
		return nil, err
	}
	defer finalize(ps...)
	n := len(x) / m.sample
	out := make([]float32, 0, n*width)
	if m.padEval {
		batch = evalChunk
	}
	for start := 0; start < n; start += batch {
		end := min(start+batch, n)
		xb, rows := x[start*m.sample:end*m.sample], end-start
		if m.padEval && rows < batch {
			rows = batch
			xb, _ = m.padded(xb, nil, rows)
		}
		dims := append([]int{rows}, m.spec.InputShape...)
		xt := tensors.FromFlatDataAndDimensions(xb, dims...)
		args := make([]any, 0, len(ps)+1)
		for _, p := range ps {
			args = append(args, p)
		}
		outs, err := exec.Exec(append(args, xt)...)
		finalize(xt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		data, err := tensors.CopyFlatData[float32](outs[0])
		finalize(outs...)
		if err != nil {
			return nil, err
		}
		out = append(out, data[:(end-start)*width]...)
	}
	return out, nil
}
