package methods

import (
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/rng"
	"github.com/fedpipe/fedpipe/stages/train"
)

// alaFLBench is fedala's impl flbench: FedALA as FL-bench runs it (the fork FedOBP's tables
// ran, uglyghost/FedOBP at b55d0fa; paths below are in it). FL-bench keeps no
// model, weights or phase per client: a client object (src/client/fedala.py:13-21) holds
// one model, one set of ALA weights W and one start_phase flag, and serves every client it
// is given, in training and in testing alike. In serial mode there is one such object
// (src/utils/trainer.py:18-19); in parallel mode each ray worker has its own (:20-27), and
// the clients go to whichever worker is idle (see rayQueue; workers 1 is serial mode).
//
// Each time a worker serves client c (set_parameters, src/client/fedala.py:33-156):
//  1. if the first tensor of its model equals the global model's, it loads the global
//     model (:56-58: the worker's first job, or a model that has not moved);
//  2. the tensors below the top layer_idx layers take the global model's (:70-74);
//  3. W (all ones the first time, :90-93) is learned on int(n·rand_percent/100) of c's
//     training samples, drawn afresh (:23-27), in batches in the drawn order: for each
//     batch W ← clip(W − eta·∇θ̂ ⊙ (θ_g − θ), 0, 1) and θ̂ = θ + (θ_g − θ) ⊙ W on the top
//     layers, θ being the worker's model (:96-126); one pass, or, while start_phase holds,
//     passes until the standard deviation of the last num_pre_loss passes' final batch
//     losses is below threshold (:128-140; max_init_epochs caps it, the code has no cap);
//     start_phase then ends for the worker (:142). The gradients are taken with BatchNorm
//     as in evaluation: θ̂ is a copy of the worker's model (:77), which the worker's last
//     evaluate() left in eval mode (src/client/fedavg.py:240; fit() sets train mode only
//     for local training, :206), and only a worker's first job, which learns nothing,
//     starts in train mode. That matters for Table 7's ResNet-18 (cnn4 has no BatchNorm);
//     fedala BNRevision 1 made it so;
//  4. the worker's model takes θ̂ on the top layers (:145-146).
//
// Training (src/client/fedavg.py:155-159) then trains that model for the local epochs and
// uploads it; the worker keeps it; the server runs size-weighted FedAvg. Its momentum
// buffers are the client's own from its last training: unlike FedAvg's client
// (src/client/fedavg.py:129-135), FedALA's set_parameters loads the optimizer state the
// server holds for the client whatever reset_optimizer_on_global_epoch says
// (src/client/fedala.py:38-41), and the trainer stores each client's state after it
// trains (src/utils/trainer.py:57-59, 101-103); a client's first training starts from
// zero. So the "local" model an adaptation blends is whatever the worker's previous client
// left, and the first adaptation of a worker's life, the one run to convergence, sees θ = θ_g and learns
// nothing. Testing (src/client/fedavg.py:284-316), every evaluation round after the
// round's aggregation, serves clients 0, 1, ... the same way (steps 1-4, on the tested
// client's training data, W and the worker's model changed for good), evaluates θ̂, and
// fine-tunes a copy; so FL-bench's FedALA figures are the models of that test-time
// adaptation, which fedpipe computes in EndRound (evaluation rounds only) and holds in
// st.Personal for EvalModel. When a worker's model is unchanged since the global model
// (step 1), W would not move (θ_g − θ = 0) and the passes are skipped.
//
// The workers' clients are the round's chains (train.ClientChains): a client's adaptation
// reads what its worker's previous client left and nothing of the other workers', so the
// workers' chains train side by side.
type alaFLBench struct {
	*fedALA
	rayAssign
}

// ConcurrentClients is false: a worker's clients depend on each other (see Chains).
func (a *alaFLBench) ConcurrentClients() bool { return false }

// alaStarted names the flag, in a worker's list, that its start phase has ended.
const alaStarted = "ala.started"

// alaW names worker tensor name's ALA weights in a worker's list.
func alaW(name string) string { return "ala.w/" + name }

func (a *alaFLBench) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
	ws := make([]tensor.List, a.workers)
	for w := range ws {
		ws[w] = st.Global.Clone()
	}
	st.Method = &fedALAState{Workers: ws, Moms: make([]tensor.List, clients)}
}

func (a *alaFLBench) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	w := a.worker(l)
	theta, err := a.serve(l, st, w, "fedala-sample")
	if err != nil {
		return train.Upload{}, err
	}
	s := st.Method.(*fedALAState)
	mom := s.Moms[c]
	trained, err := l.Fit(theta, train.Fit{Momentum: &mom})
	if err != nil {
		return train.Upload{}, err
	}
	s.Moms[c] = mom
	a.setModel(st, w, trained)
	return train.Upload{Params: trained}, nil
}

func (a *alaFLBench) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	return fedAvg{}.Finish(st, uploads, sizes)
}

// EndRound implements train.RoundEnder: before an evaluation, FL-bench's test pass over
// every client (steps 1-4 of alaFLBench), whose θ̂ becomes the client's evaluation model.
func (a *alaFLBench) EndRound(st *train.State, round int, local func(c int) *train.Local) error {
	if len(st.Personal) == 0 || !local(0).Evaluates() {
		return nil
	}
	q := newRayQueue(a.workers)
	for c := range st.Personal {
		l := local(c)
		w := q.dispatch(l.TrainSize())
		theta, err := a.serve(l, st, w, "fedala-test-sample")
		if err != nil {
			return err
		}
		st.Personal[c] = theta
	}
	return nil
}

// setModel stores p as worker w's model, keeping its W and flag.
func (a *alaFLBench) setModel(st *train.State, w int, p tensor.List) {
	ws := st.Method.(*fedALAState).Workers
	keep := tensor.List{}
	for _, t := range ws[w] {
		if p.Find(t.Name) < 0 {
			keep = append(keep, t)
		}
	}
	ws[w] = append(p.Clone(), keep...)
}

// serve runs steps 1-4 for client l on worker w and returns θ̂ (the worker's new model).
func (a *alaFLBench) serve(l *train.Local, st *train.State, w int, stream string) (tensor.List, error) {
	ws := st.Method.(*fedALAState).Workers
	global := st.Global
	model := tensor.List{}
	for _, t := range ws[w] {
		if global.Find(t.Name) >= 0 {
			model = append(model, t.Clone())
		}
	}
	if sameValues(tensor.List{global[0]}, model) {
		model = global.Clone()
	}
	top := a.top(global)
	for t := range model {
		if !top[t] {
			copy(model[t].Data, global[t].Data)
		}
	}
	weights := map[string][]float32{}
	started := ws[w].Find(alaStarted) >= 0
	for t := range model {
		if !top[t] {
			continue
		}
		name := model[t].Name
		if i := ws[w].Find(alaW(name)); i >= 0 {
			weights[name] = append([]float32(nil), ws[w][i].Data...)
		} else {
			weights[name] = ones(len(model[t].Data))
		}
	}
	blend := func() tensor.List {
		out := model.Clone()
		for t := range out {
			if top[t] {
				wt, g := weights[out[t].Name], global[t].Data
				for i, v := range model[t].Data {
					out[t].Data[i] = v + (g[i]-v)*wt[i]
				}
			}
		}
		return out
	}
	theta := blend()
	frozen := l.WithFrozenBN()
	n := len(l.TrainY())
	m := int(float64(n) * a.randPercent / 100)
	if a.eta > 0 && m > 0 && !sameValues(global, model) {
		size := len(l.TrainX()) / n
		idx := rng.New(l.Seed(), l.Round(), l.Client(), stream).Perm(n)[:m]
		var losses []float64
		for pass := 0; ; pass++ {
			var last float32
			for start := 0; start < m; start += l.BatchSize() {
				bx, by := gatherBatch(l, idx[start:min(start+l.BatchSize(), m)], size)
				g, loss, err := crossEntropyGradient(frozen, theta, bx, by)
				if err != nil {
					return nil, err
				}
				if err := checkLoss(loss, pass); err != nil {
					return nil, err
				}
				last = loss
				for t := range model {
					if !top[t] {
						continue
					}
					wt, gt, gl, lt := weights[model[t].Name], g[g.Find(model[t].Name)].Data, global[t].Data, model[t].Data
					for i := range wt {
						wt[i] = min(max(wt[i]-float32(a.eta)*gt[i]*(gl[i]-lt[i]), 0), 1)
					}
				}
				theta = blend()
			}
			losses = append(losses, float64(last))
			if started || pass+1 >= a.maxInit ||
				(len(losses) > a.numPreLoss && stddev(losses[len(losses)-a.numPreLoss:]) < a.threshold) {
				break
			}
		}
	}
	list := theta.Clone()
	for t := range model {
		if top[t] {
			list = append(list, tensor.Tensor{Name: alaW(model[t].Name), Shape: model[t].Shape, Data: weights[model[t].Name]})
		}
	}
	ws[w] = append(list, tensor.Tensor{Name: alaStarted, Shape: []int{1}, Data: []float32{1}})
	return theta, nil
}

// ones returns n ones.
func ones(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = 1
	}
	return out
}
