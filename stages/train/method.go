package train

import (
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
)

// The optional interfaces below are implemented by methods that need more from the loop
// than Method's four calls. The loop looks each up through optional, so the BatchNorm
// wrapper (NewRunMethod) never hides one.

// Communicator is implemented by methods that do not exchange whole models each way.
type Communicator interface {
	// Comm returns the bytes client c received (down) and sent (up) this round.
	Comm(st *State, c int, u Upload) (down, up int64)
}

// RoundEnder is implemented by methods that do more after the server's aggregation, on
// any client (DM-PFL's refinement of the personal weights). local(c) gives client c's
// Local for the round; the method records the Comm and Work rows of what it does.
type RoundEnder interface {
	EndRound(st *State, round int, local func(c int) *Local) error
}

// Finetuner is implemented by methods with their own evaluation-time fine-tuning, which
// replaces the run's finetune_epochs: ok says whether it applies, epochs and mask (1 =
// trained) how.
type Finetuner interface {
	Finetune(like tensor.List) (epochs int, mask tensor.List, ok bool)
}

// LastRoundAll is implemented by methods whose run trains every client in its last round,
// whatever the participation (pFedFDA's own code: servers/server_fedfda.py:24-25); such a
// run does not continue a shorter one (manifest.Extendable). LastRoundAll reports whether
// it applies.
type LastRoundAll interface {
	LastRoundAll() bool
}

// BernoulliSampler is implemented by methods whose own code draws each round's clients
// independently, each with probability train.participation, so that how many train varies
// from round to round (pFedFDA's servers/server_base.py:26-34), where fedpipe otherwise
// draws exactly participation × clients. A round that draws nobody trains nobody and leaves
// the state as it was. BernoulliSampling reports whether it applies.
type BernoulliSampler interface {
	BernoulliSampling() bool
}

// GlobalEvaluator is implemented by methods whose global model is not st.Global as is
// (DM-PFL's θ_g = w_g ⊙ m_g); the train stage stores it as results.OutTrainEvalGlobal.
type GlobalEvaluator interface {
	EvalGlobal(st *State) tensor.List
}

// ConcurrentClients is implemented by methods whose Train for client c reads the state only
// as the previous round's Finish left it and writes nothing but client c's own slots (and
// its Local), so that a round's clients may train at the same time, each on its own
// compiled model, with the results of training them one after another. Methods that do not
// implement it (or return false) train their clients one at a time. Such a method uses the
// model only through Local's methods (Fit, Fisher, FullGradientSquared,
// Gradient, WithModel), never through Local.Model() (whose Spec they may read): in lockstep
// training (Config.Lockstep) the clients share one model, which those methods take turns on.
type ConcurrentClients interface {
	ConcurrentClients() bool
}

// ClientChains is implemented by methods whose round's clients fall into chains: a client's
// Train may read what the clients before it in its chain wrote, and nothing another chain
// writes (FedALA as FL-bench runs it: each ray worker's client object serves its clients one
// after another; alaFLBench). Chains is called once a round, before any Train, with the
// round's clients in increasing order and their training-set sizes; it returns, per chain,
// positions into clients in the order they train, every position in exactly one chain. The
// chains then train side by side and a chain's clients one after another, with the results
// of training every client one after another in client order. The rules of
// ConcurrentClients for the model apply. Like ConcurrentClients it is not looked up through
// the BatchNorm wrapper: a wrapped method trains its clients one at a time in client order.
type ClientChains interface {
	Chains(round int, clients, sizes []int) [][]int
}

// BatchMeanAccuracy is implemented by methods that may score a client, as their authors'
// code does, by the unweighted mean of the accuracies of its test batches of
// train.batch_size samples in order, the last possibly short (FedSelect's official code),
// instead of the fraction of its test samples classified correctly. PerBatchAccuracy says
// whether this run does; the loss stays the per-sample mean.
type BatchMeanAccuracy interface {
	PerBatchAccuracy() bool
}

// MultiModel is implemented by methods whose evaluation may use more than one model per
// client: global returns the global model they infer with (EvalGlobal), prepared holds
// each client's own, and data(c, test) is client c's unshifted training (or test) inputs.
type MultiModel interface {
	MultiEvaluator(m *model.Model, global func() tensor.List, prepared []tensor.List, data func(c int, test bool) []float32) (Evaluator, error)
}
