package model

import (
	"errors"
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

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
