package train

// RoundStats is what a curve needs of one finished round (Config.Observe): the clients that
// trained, their mean training loss, and the evaluation's rows when the round evaluated.
// Nothing in it feeds back into training: it is read off values the round computed anyway.
type RoundStats struct {
	Round, Rounds int
	// Clients is the number of clients that trained this round.
	Clients int
	// TrainLoss is the unweighted mean over those clients of each one's mean mini-batch
	// loss during its local training this round; Batches counts the batches behind it (0:
	// no client trained through Local's passes, TrainLoss is meaningless).
	TrainLoss float64
	Batches   int
	// Evals are the round's evaluation rows (nil when the round did not evaluate).
	Evals []Metric
}

// lossTally sums a client's mini-batch training losses within one round.
type lossTally struct {
	sum float64
	n   int
}

// noteLoss records one mini-batch's training loss on the Local (its parent for a
// WithFrozenBN copy). Called by the passes that already compute the loss (train,
// trainSession); it only reads the value.
func (l *Local) noteLoss(loss float32) {
	if l.parent != nil {
		l.parent.noteLoss(loss)
		return
	}
	l.loss.sum += float64(loss)
	l.loss.n++
}

// takeLoss returns the client's mean mini-batch loss this round and the number of batches
// behind it, and resets the tally.
func (l *Local) takeLoss() (float64, int) {
	t := l.loss
	l.loss = lossTally{}
	if t.n == 0 {
		return 0, 0
	}
	return t.sum / float64(t.n), t.n
}

// roundStats averages the trained clients' losses (clients with no batch left out).
func roundStats(round, rounds int, losses []float64, batches []int, evals []Metric) RoundStats {
	s := RoundStats{Round: round, Rounds: rounds, Clients: len(losses), Evals: evals}
	n := 0
	for i, l := range losses {
		if batches[i] > 0 {
			s.TrainLoss += l
			s.Batches += batches[i]
			n++
		}
	}
	if n > 0 {
		s.TrainLoss /= float64(n)
	}
	return s
}
