package train

import (
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/results"
)

// TrainFLOPs is the training cost of one sample: for every weight tensor, the forward
// pass's multiply-adds (gomlx ModelSpec.MACs) count 2 FLOPs each, and the backward pass
// twice the forward (input and weight gradients), so 6 FLOPs per multiply-add — scaled
// by the fraction of that tensor's entries that are nonzero in params, the weights
// actually used (a sparse method's inactive weights are exactly zero). params nil counts
// every weight as used. Biases, activations, pooling and the optimizer are not counted.
func TrainFLOPs(spec model.ModelSpec, params tensor.List) (float64, error) {
	macs, err := spec.MACs()
	if err != nil {
		return 0, err
	}
	total := 0.0
	for name, m := range macs {
		density := 1.0
		if params != nil {
			if i := params.Find(name); i >= 0 {
				nz := 0
				for _, v := range params[i].Data {
					if v != 0 {
						nz++
					}
				}
				density = float64(nz) / float64(max(len(params[i].Data), 1))
			}
		}
		total += 6 * float64(m) * density
	}
	return total, nil
}

// Count adds the training of samples samples at params (nil: dense) to the client's work.
func (l *Local) Count(samples int64, params tensor.List) {
	if l.parent != nil {
		l.parent.Count(samples, params)
		return
	}
	f, err := TrainFLOPs(l.model.Spec(), params)
	if err != nil {
		return // the model was validated when it was built; nothing to count otherwise
	}
	l.samples += samples
	l.flops += float64(samples) * f
}

// TakeWork returns the round's Work row of the client and resets the counters. The loop
// records it after each client's Train; a method that trains clients elsewhere (a
// RoundEnder) records its own.
func (l *Local) TakeWork(round int) Work {
	w := Work{Round: round, Client: l.client, Samples: l.samples, FLOPs: l.flops}
	l.samples, l.flops = 0, 0
	return w
}

// Gradient returns the mean gradient of the loss over the client's training data at
// params (dense: every entry, active or not), in mini-batches of the run's batch size in
// the order of the stream (seed, round, client, "gradient/0"). Counted as dense training
// work.
func (l *Local) Gradient(params tensor.List) (tensor.List, error) {
	n := len(l.data.trainY)
	out := ZeroMask(params)
	if n == 0 {
		return out, nil
	}
	l.Count(int64(n), nil)
	err := l.Batches(1, "gradient", func(_ int, x []float32, y []int32) error {
		g, err := l.gradient(params, x, y)
		if err != nil {
			return err
		}
		w := float32(len(y)) / float32(n)
		for _, t := range g {
			o := out[out.Find(t.Name)].Data
			for j, v := range t.Data {
				o[j] += w * v
			}
		}
		return nil
	})
	return out, err
}

// Cost is one client's total cost over a run (DM-PFL Table 4; stored as results.Cost).
type Cost = results.Cost

// Costs totals the communication and work rows per client, for clients 0..clients-1.
func Costs(comm []Comm, work []Work, clients int) []Cost {
	out := make([]Cost, clients)
	seen := make([]map[int]bool, clients)
	for c := range out {
		out[c].Client = c
		seen[c] = map[int]bool{}
	}
	for _, r := range comm {
		if r.Client < 0 || r.Client >= clients {
			continue
		}
		out[r.Client].MBDown += float64(r.Down) / 1e6
		out[r.Client].MBUp += float64(r.Up) / 1e6
		seen[r.Client][r.Round] = true
	}
	for _, w := range work {
		if w.Client < 0 || w.Client >= clients {
			continue
		}
		out[w.Client].Samples += w.Samples
		out[w.Client].FLOPs += w.FLOPs
	}
	for c := range out {
		out[c].RoundsSelected = len(seen[c])
	}
	return out
}

// MeanCost averages costs over clients.
func MeanCost(costs []Cost) Cost {
	var m Cost
	m.Client = -1
	for _, c := range costs {
		m.MBDown += c.MBDown
		m.MBUp += c.MBUp
		m.FLOPs += c.FLOPs
		m.Samples += c.Samples
	}
	if n := float64(len(costs)); n > 0 {
		m.MBDown /= n
		m.MBUp /= n
		m.FLOPs /= n
		m.Samples = int64(float64(m.Samples) / n)
	}
	return m
}
