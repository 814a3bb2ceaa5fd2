package summary

import (
	"math"
	"sort"

	"github.com/fedpipe/fedpipe/results"
)

// Client is one client's test result (a row of the stage's `clients` table).
type Client = results.Client

// Summary aggregates client results (the one row of the stage's `summary` table).
type Summary = results.Summary

// Best records the best test accuracy over the evaluation rounds of training (see
// results.Best).
type Best = results.Best

// TestRower is a row of a training history that may be a test-split evaluation.
type TestRower interface {
	TestRow() (round int, c Client, ok bool)
}

// FTRower is a row of a training history that may be a test-split evaluation after
// fine-tuning.
type FTRower interface {
	FTRow() (round int, c Client, ok bool)
}

// BestOf returns the best client-mean and pooled test accuracy over the rounds of a
// training history (rows with Split "test", before fine-tuning); earlier rounds win ties.
func BestOf[M TestRower](history []M) Best {
	return bestOf(len(history), func(i int) (int, Client, bool) { return history[i].TestRow() })
}

// BestOfFT is BestOf over the after-fine-tuning rows (Split "test_ft"); ok is false when
// the history has none.
func BestOfFT[M FTRower](history []M) (b Best, ok bool) {
	for _, h := range history {
		if _, _, is := h.FTRow(); is {
			ok = true
			break
		}
	}
	return bestOf(len(history), func(i int) (int, Client, bool) { return history[i].FTRow() }), ok
}

// WithFT sets the after-fine-tuning figures of s from the final fine-tuned client results
// and the best of the history's after-fine-tuning evaluations.
func WithFT(s *Summary, rows []Client, best Best) {
	f := Summarize(rows)
	s.FT = results.Finetuned{Has: 1, Mean: f.Mean, Std: f.Std, Pooled: f.Pooled, MeanLoss: f.MeanLoss,
		BestMean: best.Mean, BestMeanRound: best.MeanRound, BestPooled: best.Pooled, BestPooledRound: best.PooledRound}
}

// RoundSummary is the summary of one evaluation round of a training history.
type RoundSummary struct {
	Round int
	Summary
}

// PerRound summarizes each evaluation round of a training history (rows with Split
// "test", before fine-tuning), in round order.
func PerRound[M TestRower](history []M) []RoundSummary {
	return perRound(len(history), func(i int) (int, Client, bool) { return history[i].TestRow() })
}

// PerRoundFT is PerRound over the after-fine-tuning rows (Split "test_ft"); nil when the
// history has none.
func PerRoundFT[M FTRower](history []M) []RoundSummary {
	return perRound(len(history), func(i int) (int, Client, bool) { return history[i].FTRow() })
}

func perRound(n int, row func(i int) (int, Client, bool)) []RoundSummary {
	byRound := map[int][]Client{}
	var rounds []int
	for i := 0; i < n; i++ {
		r, c, ok := row(i)
		if !ok {
			continue
		}
		if _, seen := byRound[r]; !seen {
			rounds = append(rounds, r)
		}
		byRound[r] = append(byRound[r], c)
	}
	sort.Ints(rounds)
	out := make([]RoundSummary, 0, len(rounds))
	for _, r := range rounds {
		out = append(out, RoundSummary{Round: r, Summary: Summarize(byRound[r])})
	}
	return out
}

func bestOf(n int, row func(i int) (int, Client, bool)) Best {
	var b Best
	for i, s := range perRound(n, row) {
		if i == 0 || s.Mean > b.Mean {
			b.Mean, b.MeanRound = s.Mean, s.Round
		}
		if i == 0 || s.Pooled > b.Pooled {
			b.Pooled, b.PooledRound = s.Pooled, s.Round
		}
	}
	return b
}

// Summarize computes the summary of client results; clients without test samples are
// left out of both figures.
func Summarize(rows []Client) Summary {
	var s Summary
	var sum, sq, correct, loss float64
	for _, r := range rows {
		if r.Samples == 0 {
			continue
		}
		s.Clients++
		sum += r.Accuracy
		sq += r.Accuracy * r.Accuracy
		correct += r.Accuracy * float64(r.Samples)
		loss += r.Loss * float64(r.Samples)
		s.TestSamples += r.Samples
	}
	if s.Clients == 0 {
		return s
	}
	s.Mean = sum / float64(s.Clients)
	s.Std = math.Sqrt(math.Max(0, sq/float64(s.Clients)-s.Mean*s.Mean))
	s.Pooled = correct / float64(s.TestSamples)
	s.MeanLoss = loss / float64(s.TestSamples)
	return s
}
