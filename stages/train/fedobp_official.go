package train

import "github.com/fedpipe/fedpipe/artifacts/tensor"

// obpInit names the State.Aux entry of FedOBP that holds the run's initial model (one
// list, at index 0): the θ_c of a client that never trained.
const obpInit = "init"

// initialOf returns the initial model FedOBP kept in st, or nil.
func initialOf(st *State) tensor.List {
	if l := st.Aux[obpInit]; len(l) > 0 {
		return l[0]
	}
	return nil
}

// fisher returns the client's Fisher scores at params: the square of the gradient of its
// mean training loss (FedOBP Eq. 6) or, for the empirical form, the mean of its squared
// per-sample gradients (Local.Fisher; FedDPA).
func (f *fedOBP) fisher(l *Local, params tensor.List) (tensor.List, error) {
	if !f.fisherFull {
		return l.Fisher(params)
	}
	return l.FullGradientSquared(params)
}

// FullGradientSquared returns the square, entry by entry, of the gradient of the client's
// mean training loss at params (computed over batches of EvalBatch samples, each weighted
// by its size).
func (l *Local) FullGradientSquared(params tensor.List) (tensor.List, error) {
	out := zeroMask(params)
	n := len(l.data.trainY)
	if n == 0 {
		return out, nil
	}
	size := len(l.data.trainX) / n
	for start := 0; start < n; start += EvalBatch {
		end := min(start+EvalBatch, n)
		g, err := l.model.Gradient(params, l.data.trainX[start*size:end*size], l.data.trainY[start:end])
		if err != nil {
			return nil, err
		}
		l.count(int64(end-start), nil)
		w := float32(end-start) / float32(n)
		for t := range g {
			o := out[out.Find(g[t].Name)].Data
			for j, v := range g[t].Data {
				o[j] += w * v
			}
		}
	}
	for _, t := range out {
		for j, v := range t.Data {
			t.Data[j] = v * v
		}
	}
	return out, nil
}
