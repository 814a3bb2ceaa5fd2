// Package evaluate measures the final models on each client's test split and summarizes
// them two ways, always labelled: the mean ± std over clients of per-client accuracy, and
// the pooled accuracy over all clients' test samples (weighted by test size).
package evaluate

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

// BestOf returns the best client-mean and pooled test accuracy over the rounds of a
// training history (rows with Split "test"); earlier rounds win ties.
func BestOf[M TestRower](history []M) Best {
	byRound := map[int][]Client{}
	var rounds []int
	for _, h := range history {
		r, c, ok := h.TestRow()
		if !ok {
			continue
		}
		if _, seen := byRound[r]; !seen {
			rounds = append(rounds, r)
		}
		byRound[r] = append(byRound[r], c)
	}
	sort.Ints(rounds)
	var b Best
	for i, r := range rounds {
		s := Summarize(byRound[r])
		if i == 0 || s.Mean > b.Mean {
			b.Mean, b.MeanRound = s.Mean, r
		}
		if i == 0 || s.Pooled > b.Pooled {
			b.Pooled, b.PooledRound = s.Pooled, r
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
