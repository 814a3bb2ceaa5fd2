package stages

import (
	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/stages/train"
)

// livePoint is a round's figures as a progress journal keeps them: the trained clients'
// mean training loss and, after an evaluation, the clients' mean test accuracy and loss,
// the test accuracy after fine-tuning (runs that fine-tune) and the training accuracy
// (when evaluated), each an unweighted mean over clients as in the report's tables.
func livePoint(s train.RoundStats) live.Point {
	p := live.Point{Round: s.Round, Clients: s.Clients}
	if s.Batches > 0 {
		loss := s.TrainLoss
		p.TrainLoss = &loss
	}
	if len(s.Evals) == 0 {
		return p
	}
	type mean struct {
		acc, loss float64
		n         int
	}
	by := map[string]*mean{}
	for _, r := range s.Evals {
		m := by[r.Split]
		if m == nil {
			m = &mean{}
			by[r.Split] = m
		}
		m.acc += r.Accuracy
		m.loss += r.Loss
		m.n++
	}
	e := &live.Eval{}
	if m := by["test"]; m != nil {
		e.TestAccuracy, e.TestLoss = m.acc/float64(m.n), m.loss/float64(m.n)
	}
	if m := by[train.SplitTestFT]; m != nil {
		v := m.acc / float64(m.n)
		e.TestFTAccuracy = &v
	}
	if m := by["train"]; m != nil {
		v := m.acc / float64(m.n)
		e.TrainAccuracy = &v
	}
	p.Eval = e
	return p
}
