// Package train is the federated simulator: N clients, a sampled fraction per round, local
// SGD epochs, and a method that decides what clients start from and what the server does
// with their models. It sees parameters only as plain tensors; gomlx does the numerics.
package train

import (
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/results"
)

// Metric is one row of the per-round metrics table (stored as results.Metric).
type Metric = results.Metric

// SplitTestFT labels the metric rows of a test split evaluated after fine-tuning (only for
// runs that fine-tune; "test" rows are always the model the method holds).
const SplitTestFT = results.SplitTestFT

// State is everything a federated run carries from one round to the next. Together with
// the run's seed it determines the rest of the run, so it is what a checkpoint stores.
type State struct {
	// Round is the last completed round (0 before the first).
	Round int
	// Global is the server's model.
	Global tensor.List
	// Personal holds each client's own model for methods that keep one (nil otherwise).
	Personal []tensor.List
	// Masks holds each client's 0/1 personalization mask (1 = personalized) for methods
	// that select entries (nil otherwise; a nil entry means nothing is personalized).
	Masks []tensor.List
	// Method is the method's own state beyond Global, Personal and Masks (FedSelect's
	// growth anchors, FedOBP's score averages, APFL's mixing weights): a typed value the
	// method's Init sets, nil for methods that keep none. See MethodState.
	Method MethodState
	// BN holds each client's own BatchNorm tensors when the run keeps them out of
	// aggregation (see NewRunMethod); nil otherwise.
	BN      []tensor.List
	Metrics []Metric
	// Selection records, per round and sampled client, the personalized fraction per
	// tensor.
	Selection []Selection
	// Comm records, per round and sampled client, the bytes it received and sent.
	Comm []Comm
	// Work records, per round and client that trained, the samples it processed and the
	// training FLOPs they cost (see Local.Work).
	Work []Work
	// Fingerprints holds the digest of the state after each round (StateDigest), stored
	// as the train stage's results.OutTrainFingerprints output so that an audit can
	// recompute them.
	Fingerprints []Fingerprint
	// Sketch is the sketch of the state after round SketchRound (SketchState), stored as
	// the train stage's results.OutTrainSketch output for the cross-backend check; nil
	// before that round, and in a run continued from a result that predates sketches.
	Sketch *Sketch
}

// Work is one client's training computation in one round (stored as results.Work).
type Work = results.Work

// Comm is one client's communication in one round, counting 4 bytes per float32 value
// and one bit per mask entry sent (stored as results.Comm).
type Comm = results.Comm

// ModelBytes is the size of a model as float32 values: what sending it costs.
func ModelBytes(l tensor.List) int64 { return 4 * int64(l.NumElements()) }

// Selection is one row of the personalized-fraction table (stored as results.Selection).
type Selection = results.Selection

// Upload is what a client returns from a round, for the method's Finish: its trained
// model and whatever else the method carries from client to server.
type Upload struct {
	Params tensor.List
	// NextMask is a 0/1 mask beside the model: for methods that select entries, the mask
	// the client uses from the next round on; for the others that send one, the entries
	// the upload covers (FedPer's shared part, LotteryFL's subnetwork, DM-PFL's mask).
	NextMask tensor.List
	// Personal is a client-side model trained beside the upload (Ditto, APFL, pFedFDA);
	// never sent.
	Personal tensor.List
	// Stats are statistics sent beside the model (pFedFDA's Gaussian estimates, FedPAC's
	// centroids and collaboration statistics, FLOCO's update signature).
	Stats tensor.List
}

// Method is a federated algorithm: how a client trains in a round, and what the server
// does with the uploads.
type Method interface {
	// Init prepares the state after the global model is initialized.
	Init(st *State, clients int)
	// Train runs client c's part of the round.
	Train(l *Local, st *State, c int) (Upload, error)
	// Finish folds the round's uploads (by client, with training-set sizes) into the state.
	Finish(st *State, uploads map[int]Upload, sizes map[int]int) error
	// EvalModel returns the model client c is evaluated with.
	EvalModel(st *State, c int) tensor.List
}
