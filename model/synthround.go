package model

import (
	"math"
	"math/rand/v2"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// A synthetic federated round is what CheckBackend compares across backends and what
// `fedpipe bench --round` (package bench) times: clients of Gamma-distributed sizes holding
// random data, each trained from the global model by SGD in its own order (LocalTrain), or
// all at once in one compiled step (LockstepTrain), then averaged by size (AverageBySize).

// SyntheticClient is one client of a synthetic round: its training and test inputs
// (flattened samples) and labels.
type SyntheticClient struct {
	TrainX, TestX []float32
	TrainY, TestY []int32
}

// gammaSample draws from Gamma(shape, 1) (Marsaglia and Tsang; shape < 1 boosted).
func gammaSample(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gammaSample(r, shape+1) * math.Pow(r.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// SyntheticClients builds clients clients holding trainSamples training samples in all,
// with random inputs and labels of spec's shape: uneven sizes (Gamma(0.7)-distributed
// shares, at least 10 each), or trainSamples/clients each with evenSizes; each holds a
// third of its training size as test samples (at least 3). seed fixes sizes and data.
func SyntheticClients(clients, trainSamples int, evenSizes bool, seed uint64, spec ModelSpec) []SyntheticClient {
	r := rand.New(rand.NewPCG(seed, 0x726f756e64)) // "round"
	w := make([]float64, clients)
	sum := 0.0
	for i := range w {
		w[i] = gammaSample(r, 0.7)
		sum += w[i]
	}
	sample := tensor.Size(spec.InputShape)
	out := make([]SyntheticClient, clients)
	for c := range out {
		n := max(10, int(w[c]/sum*float64(trainSamples)))
		if evenSizes {
			n = max(1, trainSamples/clients)
		}
		out[c].TrainX, out[c].TrainY = randomData(r, n, sample, spec.NumClasses)
		out[c].TestX, out[c].TestY = randomData(r, max(3, n/3), sample, spec.NumClasses)
	}
	return out
}

// BatchPlan is the sample indices of every step of epochs passes over n samples in
// batches of batch, each epoch in a fresh order drawn from r.
func BatchPlan(n, epochs, batch int, r *rand.Rand) [][]int {
	var plan [][]int
	for range epochs {
		perm := r.Perm(n)
		for start := 0; start < n; start += batch {
			plan = append(plan, perm[start:min(start+batch, n)])
		}
	}
	return plan
}

// gather appends the client's samples idx to bx and by (emptied first).
func (cl SyntheticClient) gather(idx []int, sample int, bx []float32, by []int32) ([]float32, []int32) {
	bx, by = bx[:0], by[:0]
	for _, i := range idx {
		bx = append(bx, cl.TrainX[i*sample:(i+1)*sample]...)
		by = append(by, cl.TrainY[i])
	}
	return bx, by
}

// LocalTrain runs epochs of SGD from params over the client's training data, in a fresh
// order each epoch, and returns the trained parameters.
func LocalTrain(m *Model, params tensor.List, opt SGD, cl SyntheticClient, epochs, batch int, r *rand.Rand) (tensor.List, error) {
	s, err := m.NewSession(params, opt)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var bx []float32
	var by []int32
	for _, idx := range BatchPlan(len(cl.TrainY), epochs, batch, r) {
		bx, by = cl.gather(idx, m.sample, bx, by)
		if _, err := s.Step(bx, by); err != nil {
			return nil, err
		}
	}
	return s.Params()
}

// LockstepTrain is LocalTrain for several clients at once, in one MultiSession: client i
// from params[i] over cls[i], its epoch orders from rs[i]. A client whose steps are over
// idles until the last is done.
func LockstepTrain(m *Model, params []tensor.List, opt SGD, cls []SyntheticClient, epochs, batch int, rs []*rand.Rand) ([]tensor.List, error) {
	ms, err := m.NewMultiSession(params, opt)
	if err != nil {
		return nil, err
	}
	defer ms.Close()
	plans := make([][][]int, len(cls))
	steps := 0
	for i, cl := range cls {
		plans[i] = BatchPlan(len(cl.TrainY), epochs, batch, rs[i])
		steps = max(steps, len(plans[i]))
	}
	bx := make([][]float32, len(cls))
	by := make([][]int32, len(cls))
	for step := range steps {
		for i, cl := range cls {
			bx[i], by[i] = bx[i][:0], by[i][:0]
			if step < len(plans[i]) {
				bx[i], by[i] = cl.gather(plans[i][step], m.sample, bx[i], by[i])
			}
		}
		if _, err := ms.Step(bx, by); err != nil {
			return nil, err
		}
	}
	return ms.Params()
}

// AverageBySize is the average of models weighted by sizes, each entry summed in float64
// in the models' order.
func AverageBySize(models []tensor.List, sizes []int) tensor.List {
	out := models[0].Clone()
	total := 0.0
	for _, n := range sizes {
		total += float64(n)
	}
	for i := range out {
		for j := range out[i].Data {
			sum := 0.0
			for k, m := range models {
				sum += float64(sizes[k]) * float64(m[i].Data[j])
			}
			out[i].Data[j] = float32(sum / total)
		}
	}
	return out
}
