package model

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// BackendCheck is what CheckBackend found: how far one federated round on a backend lands
// from the same round on a reference backend, and whether the backend repeats itself.
type BackendCheck struct {
	Backend, Reference string // backend ids (BackendID)
	// Clients, Steps and Samples describe the round: clients trained from one global model
	// and averaged, Steps SGD steps and Samples training samples in all.
	Clients, Steps, Samples int
	// RelDiff is ‖backend − reference‖₂ / ‖reference‖₂ over the averaged model's
	// parameters; WorstTensor the largest such ratio of one tensor, Worst its name (small
	// tensors such as biases move most where a ReLU or max-pooling decision flips).
	RelDiff     float64
	WorstTensor float64
	Worst       string
	// Repeatable: a second round on the backend gave the same bits.
	Repeatable bool
	// Lockstep is true when the backend's model pads batches and the clients were also
	// trained in lockstep (MultiSession) there: LockstepRelDiff is that round's distance
	// from the backend's own client-by-client round (0 on fpfast, where the two are
	// bit-identical), LockstepRepeatable whether a second lockstep round repeated it.
	Lockstep           bool
	LockstepRelDiff    float64
	LockstepRepeatable bool
	// Seconds are the wall times of the backend's first round (compilation included) and of
	// the reference's.
	Seconds, ReferenceSeconds float64
}

// CheckTolerance is the largest relative difference (‖a − b‖₂/‖b‖₂ over all parameters)
// a BackendCheck accepts between two backends' parameters after a round (docs/gpus.md).
const CheckTolerance = 1e-4

// Failed reports whether the check found the backend off: further than CheckTolerance from
// the reference, not repeating itself, or, in lockstep, either.
func (r BackendCheck) Failed() bool {
	return r.RelDiff > CheckTolerance || !r.Repeatable ||
		(r.Lockstep && (!r.LockstepRepeatable || r.LockstepRelDiff > CheckTolerance))
}

// WriteText prints the check as `fedpipe backend --check` does: the round, the distance
// from the reference, the reruns, and "ok" or "FAILED".
func (r BackendCheck) WriteText(w io.Writer) {
	same := map[bool]string{true: "same bits", false: "DIFFERENT bits"}
	fmt.Fprintf(w, "check:    one round, %d clients, %d steps (%d samples): %.3g s here (compilation included), %.3g s on %s\n",
		r.Clients, r.Steps, r.Samples, r.Seconds, r.ReferenceSeconds, r.Reference)
	fmt.Fprintf(w, "          vs %s: relative difference %.3g (tolerance %g; most in one tensor: %.3g, %s)\n",
		r.Reference, r.RelDiff, CheckTolerance, r.WorstTensor, r.Worst)
	fmt.Fprintf(w, "          rerun: %s\n", same[r.Repeatable])
	if r.Lockstep {
		fmt.Fprintf(w, "          lockstep: %.3g from client by client; rerun: %s\n", r.LockstepRelDiff, same[r.LockstepRepeatable])
	}
	fmt.Fprintf(w, "          %s\n", map[bool]string{false: "ok", true: "FAILED"}[r.Failed()])
}

// CheckConfig is a CheckBackend round, a synthetic one (SyntheticClients): Clients all
// take part; Seed fixes data, sizes and orders.
type CheckConfig struct {
	Spec                          ModelSpec
	Clients, TrainSamples, Epochs int
	Batch                         int
	Opt                           SGD
	Seed                          uint64
}

// DefaultCheckConfig is a small FedOBP-FMNIST round: cnn4 on 28×28×1, 5 uneven clients of
// 1,500 samples in all (ragged last batches), 2 epochs, batch 32, SGD lr 0.01 momentum 0.7.
func DefaultCheckConfig() CheckConfig {
	return CheckConfig{Spec: ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10},
		Clients: 5, TrainSamples: 1500, Epochs: 1, Batch: 32, Opt: SGD{LR: 0.01, Momentum: 0.7}, Seed: 1}
}

// CheckBackend runs one federated round of cfg (every client trained from the same global
// model on random data, then the size-weighted average) on backend and on reference, and
// compares the averaged models; it repeats the round on backend, and, where backend's model
// pads batches, runs it in lockstep there too.
func CheckBackend(backend, reference string, cfg CheckConfig) (BackendCheck, error) {
	out := BackendCheck{Backend: BackendID(backend), Reference: BackendID(reference), Clients: cfg.Clients}
	clients := SyntheticClients(cfg.Clients, cfg.TrainSamples, false, cfg.Seed, cfg.Spec)
	learnable(clients, cfg.Spec, cfg.Seed)
	for _, cl := range clients {
		n := len(cl.TrainY)
		out.Samples += cfg.Epochs * n
		out.Steps += cfg.Epochs * ((n + cfg.Batch - 1) / cfg.Batch)
	}
	global := cfg.Spec.Init(cfg.Seed)
	streams := func() []*rand.Rand {
		rs := make([]*rand.Rand, len(clients))
		for c := range rs {
			rs[c] = rand.New(rand.NewPCG(cfg.Seed, uint64(c)))
		}
		return rs
	}
	sizes := make([]int, len(clients))
	for c, cl := range clients {
		sizes[c] = len(cl.TrainY)
	}
	round := func(m *Model, lockstep bool) (tensor.List, error) {
		rs := streams()
		if lockstep {
			params := make([]tensor.List, len(clients))
			for c := range params {
				params[c] = global
			}
			trained, err := LockstepTrain(m, params, cfg.Opt, clients, cfg.Epochs, cfg.Batch, rs)
			if err != nil {
				return nil, err
			}
			return AverageBySize(trained, sizes), nil
		}
		trained := make([]tensor.List, len(clients))
		for c, cl := range clients {
			var err error
			if trained[c], err = LocalTrain(m, global, cfg.Opt, cl, cfg.Epochs, cfg.Batch, rs[c]); err != nil {
				return nil, fmt.Errorf("client %d: %w", c, err)
			}
		}
		return AverageBySize(trained, sizes), nil
	}
	ref, err := NewModel(reference, cfg.Spec)
	if err != nil {
		return out, err
	}
	defer ref.Close()
	start := time.Now()
	want, err := round(ref, false)
	if err != nil {
		return out, fmt.Errorf("%s: %w", reference, err)
	}
	out.ReferenceSeconds = time.Since(start).Seconds()
	m, err := NewModel(backend, cfg.Spec)
	if err != nil {
		return out, err
	}
	defer m.Close()
	start = time.Now()
	got, err := round(m, false)
	if err != nil {
		return out, fmt.Errorf("%s: %w", backend, err)
	}
	out.Seconds = time.Since(start).Seconds()
	out.RelDiff, out.WorstTensor, out.Worst = RelDiff(got, want)
	again, err := round(m, false)
	if err != nil {
		return out, err
	}
	out.Repeatable = identical(got, again)
	if !m.PadsBatches() {
		return out, nil
	}
	out.Lockstep = true
	lock, err := round(m, true)
	if err != nil {
		return out, fmt.Errorf("%s, lockstep: %w", backend, err)
	}
	out.LockstepRelDiff, _, _ = RelDiff(lock, got)
	lockAgain, err := round(m, true)
	if err != nil {
		return out, err
	}
	out.LockstepRepeatable = identical(lock, lockAgain)
	return out, nil
}

// RelDiff compares parameter lists matched by name: whole is ‖a − b‖₂ / ‖b‖₂ over all of
// b's entries, worst the largest such ratio of one tensor, where that tensor (a tensor whose
// b is all zero counts its absolute difference). A tensor missing from a, of another size or
// with a NaN difference makes both +Inf.
func RelDiff(a, b tensor.List) (whole, worst float64, where string) {
	var diff, scale float64
	for _, tb := range b {
		i := a.Find(tb.Name)
		if i < 0 || len(a[i].Data) != len(tb.Data) {
			return math.Inf(1), math.Inf(1), tb.Name
		}
		var d2, s2 float64
		for j, v := range tb.Data {
			e := float64(a[i].Data[j]) - float64(v)
			d2 += e * e
			s2 += float64(v) * float64(v)
		}
		if math.IsNaN(d2) {
			return math.Inf(1), math.Inf(1), tb.Name
		}
		diff, scale = diff+d2, scale+s2
		d := math.Sqrt(d2)
		if s2 > 0 {
			d /= math.Sqrt(s2)
		}
		if d > worst || where == "" {
			worst, where = d, tb.Name
		}
	}
	whole = math.Sqrt(diff)
	if scale > 0 {
		whole /= math.Sqrt(scale)
	}
	return whole, worst, where
}

// identical reports whether two parameter lists hold the same bits, tensor by tensor.
func identical(a, b tensor.List) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || len(a[i].Data) != len(b[i].Data) {
			return false
		}
		for j := range a[i].Data {
			if math.Float32bits(a[i].Data[j]) != math.Float32bits(b[i].Data[j]) {
				return false
			}
		}
	}
	return true
}

// learnable makes the clients' random training samples learnable: each gets its class's fixed random
// pattern added (twice the noise's scale), so training moves towards a solution as on real
// data rather than memorizing noise, which amplifies rounding differences from step to step.
func learnable(clients []SyntheticClient, spec ModelSpec, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x6c6561726e)) // "learn"
	size := tensor.Size(spec.InputShape)
	patterns := make([][]float32, spec.NumClasses)
	for k := range patterns {
		patterns[k] = make([]float32, size)
		for i := range patterns[k] {
			patterns[k][i] = float32(2 * r.NormFloat64())
		}
	}
	add := func(x []float32, y []int32) {
		for i, label := range y {
			for j, v := range patterns[label] {
				x[i*size+j] += v
			}
		}
	}
	for _, cl := range clients {
		add(cl.TrainX, cl.TrainY)
	}
}
