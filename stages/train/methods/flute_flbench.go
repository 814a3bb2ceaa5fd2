package methods

import (
	"math"
	"slices"
	"sort"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// fluteFLBench is flute's impl flbench: FLUTE as FL-bench runs it (the fork FedOBP's tables
// ran, uglyghost/FedOBP at b55d0fa; paths below are in it).
//
// Client (src/client/flute.py:24-64, a FedPer client, src/client/fedper.py:7-9): every
// local epoch trains on
//
//	CE(W·f(x) + b, y) + lambda1·‖WWᵀ/‖WWᵀ‖_F − (I − 11ᵀ/C)⊙(llᵀ)/√(C−1)‖_F + lambda2·‖W‖²_F
//
// (W the classifier weight, C rows, one per class; l the 0/1 indicator of the classes in
// the client's training data; the first norm is not squared; C counts every class, present
// or not). The features come from get_last_features, which detaches them
// (src/utils/models.py:63,68), so no term reaches the body: the body never trains, in any
// epoch, whatever rep_round says (:58-63), and lambda3's ‖f‖² term (:59) has no gradient.
// fedpipe therefore trains the head alone for the run's local epochs, with momentum SGD
// from zero (reset_optimizer_on_global_epoch is true in the logs) and batches of one
// sample skipped (:29-30); rep_round and lambda3 change nothing and are not parameters.
//
// Server (src/server/flute.py:39-82): FedAvg over every parameter, the head included, by
// training-set size (src/server/fedavg.py:625-667); a client that never trained is
// evaluated with that average (its personal parameters are empty). Then one SGD step of
// size nc2_lr on the stacked uploaded head weights under the mean over the round's clients
// of the same neural-collapse norm (:44-77), and client selected_clients[i] keeps row i of
// the result as its head weight (:79-82); its bias and body stay its upload's. The stack is
// in the order the packages arrived while the labels are in sampling order, so in parallel
// mode (the logged runs: 2 ray workers) a client can receive another client's stepped head:
// fedpipe pairs them as rayQueue's completion order says (workers; 1: serial, no mix-up).
// The body the clients upload is the global one unchanged, so the global body stays the
// initial model's for the whole run, but for its BatchNorm running statistics: the
// body's forward passes run in train mode (:25), so they move with every batch, and
// `buffers: global` makes them parameters that the server averages (flute BatchNorm
// revision 1; cnn4 has none).
type fluteFLBench struct {
	lambda1, lambda2, lr float64
	workers              int
}

// fluteLabels names the upload's indicator of the classes in the client's training data.
const fluteLabels = "flute.labels"

func (f fluteFLBench) train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	head := headMask(st.Global)
	theta := st.Global.Clone()
	if p := st.Personal[c]; p != nil {
		theta = merge(st.Global, p, head)
	}
	classes := l.Model().Spec().NumClasses
	labels := tensor.New(fluteLabels, classes)
	for _, y := range l.TrainY() {
		labels.Data[y] = 1
	}
	wi := theta.Find("classifier.weight")
	d := len(theta[wi].Data) / classes
	opt := newGoSGD(l.Optimizer())
	err := l.Batches(l.Epochs(), "flute-flbench", func(e int, x []float32, y []int32) error {
		if len(y) <= 1 {
			return nil
		}
		var g, stats tensor.List
		err := l.WithModel(func(m *model.Model) (err error) {
			g, err = m.Gradient(theta, x, y)
			stats = slices.Clone(m.BatchStats()) // the model reuses the list on its next call
			return err
		})
		if err != nil {
			return err
		}
		// The body's forward pass runs in train mode, so its BatchNorm running statistics
		// move with every batch although nothing trains it (:25, :33).
		setStats(theta, stats)
		w := toFloat64(theta[wi].Data)
		_, reg := fluteNC(w, d, classes, labels.Data)
		gw := g[g.Find("classifier.weight")].Data
		for i := range gw {
			gw[i] += float32(f.lambda1*reg[i] + 2*f.lambda2*w[i])
		}
		opt.step("", theta, g, head, 1)
		return headFinite(theta[wi].Data, e)
	})
	if err != nil {
		return train.Upload{}, err
	}
	return train.Upload{Params: theta, Stats: tensor.List{labels}}, nil
}

func (f fluteFLBench) finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	if err := (fedAvg{}).Finish(st, uploads, sizes); err != nil {
		return err
	}
	// fedpipe trains a round's clients in ascending order: FL-bench's dispatch order.
	sampled := make([]int, 0, len(uploads))
	for c := range uploads {
		sampled = append(sampled, c)
	}
	sort.Ints(sampled)
	q := newRayQueue(f.workers)
	for _, c := range sampled {
		q.dispatch(sizes[c])
	}
	arrived := q.drain()
	stacked := make([][]float64, len(sampled))
	present := make([][]float32, len(sampled))
	for i, c := range sampled {
		u := uploads[sampled[arrived[i]]]
		stacked[i] = toFloat64(u.Params[u.Params.Find("classifier.weight")].Data)
		present[i] = uploads[c].Stats[0].Data
		st.Personal[c] = uploads[c].Params.Clone()
	}
	like := st.Global[st.Global.Find("classifier.weight")]
	classes := like.Shape[len(like.Shape)-1]
	stepped := fluteServerStep(stacked, present, len(like.Data)/classes, classes, f.lr)
	for i, c := range sampled {
		w := st.Personal[c][st.Personal[c].Find("classifier.weight")].Data
		for j, v := range stepped[i] {
			w[j] = float32(v)
		}
	}
	return nil
}

// fluteServerStep is the server's step (src/server/flute.py:47-77): each stacked head
// weight w_i ([d, C] row-major, as fedpipe stores the classifier) moves by
// −lr/m·∇fluteNC(w_i; labels_i), m the number of heads. It returns the new weights.
func fluteServerStep(stacked [][]float64, present [][]float32, d, classes int, lr float64) [][]float64 {
	out := make([][]float64, len(stacked))
	for i, w := range stacked {
		_, g := fluteNC(w, d, classes, present[i])
		out[i] = make([]float64, len(w))
		for j, v := range w {
			out[i][j] = v - lr/float64(len(stacked))*g[j]
		}
	}
	return out
}

// fluteNC returns FL-bench's neural-collapse norm of a head weight w ([d, C] row-major:
// column c is class c's weight vector), ‖G/‖G‖_F − (I − 11ᵀ/C)⊙(llᵀ)/√(C−1)‖_F with G the
// C×C Gram matrix of the class vectors and l the 0/1 class indicator, and its gradient
// with respect to w (zero where the norm or G is zero).
func fluteNC(w []float64, d, classes int, l []float32) (float64, []float64) {
	grad := make([]float64, len(w))
	if classes < 2 {
		return 0, grad
	}
	gram := make([]float64, classes*classes)
	target := make([]float64, classes*classes)
	s := math.Sqrt(float64(classes - 1))
	for a := range classes {
		for b := range classes {
			v := 0.0
			for r := range d {
				v += w[r*classes+a] * w[r*classes+b]
			}
			gram[a*classes+b] = v
			e := -1 / float64(classes)
			if a == b {
				e++
			}
			target[a*classes+b] = e * float64(l[a]*l[b]) / s
		}
	}
	gg, sq := normalizedGrad(gram, target) // gradient of the squared norm
	val := math.Sqrt(sq)
	if val == 0 {
		return 0, grad
	}
	// ∂‖·‖/∂G = ∂‖·‖²/∂G / (2‖·‖); ∂/∂w_a = Σ_b (∂_ab + ∂_ba)·w_b.
	for a := range classes {
		for b := range classes {
			k := (gg[a*classes+b] + gg[b*classes+a]) / (2 * val)
			for r := range d {
				grad[r*classes+a] += k * w[r*classes+b]
			}
		}
	}
	return val, grad
}

// toFloat64 converts float32 values to float64.
func toFloat64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
