package train

import (
	"strings"

	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
)

// clientData is one client's samples, copied out of the dataset (clientSet.train, .test).
type clientData struct {
	trainX, testX []float32
	trainY, testY []int32
}

// clientSet gives each client's samples, gathered from the dataset when they are needed and
// dropped after: a round copies only its participants' training sets and an evaluation one
// client's splits at a time, where keeping every client's copy would hold the dataset twice
// for the whole run (209 MB more for FMNIST, the largest entry of a 100-client run's heap
// profile). The dataset is only read, so clients may be gathered side by side.
type clientSet struct {
	d *data.Dataset
	a *partition.Assignment
}

// n is the number of clients.
func (cs clientSet) n() int { return cs.a.Clients() }

// trainSize is client c's number of training samples.
func (cs clientSet) trainSize(c int) int { return len(cs.a.Train[c]) }

// train returns client c's training split (its test split left empty).
func (cs clientSet) train(c int) clientData {
	var cd clientData
	cd.trainX, cd.trainY = cs.d.Gather(cs.a.Train[c])
	return cd
}

// test returns client c's test split.
func (cs clientSet) test(c int) ([]float32, []int32) { return cs.d.Gather(cs.a.Test[c]) }

// LockstepDefault says whether runs on backend (as model.ResolveBackend returns it) train
// in lockstep: on XLA, always (the results on XLA are those of lockstep training).
func LockstepDefault(backend string) bool { return strings.HasPrefix(backend, "xla:") }
