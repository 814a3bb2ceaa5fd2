// Package evaluate measures the final models on each client's test split and summarizes
// them two ways, always labelled: the mean ± std over clients of per-client accuracy, and
// the pooled accuracy over all clients' test samples (weighted by test size).
package evaluate

import (
	"fmt"
	"math"
	"sort"

	"github.com/fedpipe/fedpipe/artifacts/table"
)

// Client is one client's test result.
type Client struct {
	Client   int
	Samples  int
	Loss     float64
	Accuracy float64
}

// Summary aggregates client results.
type Summary struct {
	Clients int
	// Mean and Std are over clients, each client counting once (Std is the population
	// standard deviation, ddof = 0).
	Mean, Std float64
	// Pooled is the accuracy over all test samples of all clients.
	Pooled      float64
	TestSamples int
	// MeanLoss is the pooled mean cross-entropy.
	MeanLoss float64
	// Best is the best test accuracy seen at the evaluation rounds during training.
	Best Best
}

// Best records the best test accuracy over the evaluation rounds of training (FedOBP
// reports the best of its evaluations every 100 rounds): by client mean and by pooled
// accuracy, each with its round.
type Best struct {
	Mean, Pooled           float64
	MeanRound, PooledRound int
}

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

// ClientsTable encodes client results: client, samples, loss, accuracy.
func ClientsTable(rows []Client) *table.Table {
	var client, samples []int64
	var loss, acc []float64
	for _, r := range rows {
		client = append(client, int64(r.Client))
		samples = append(samples, int64(r.Samples))
		loss = append(loss, r.Loss)
		acc = append(acc, r.Accuracy)
	}
	return &table.Table{Columns: []table.Column{
		table.Int64Col("client", client),
		table.Int64Col("samples", samples),
		table.Float64Col("loss", loss),
		table.Float64Col("accuracy", acc),
	}}
}

// SummaryTable encodes a summary as one row, labelled with the run it belongs to.
func SummaryTable(s Summary, meta map[string]string) *table.Table {
	return &table.Table{Meta: meta, Columns: []table.Column{
		table.Int64Col("clients", []int64{int64(s.Clients)}),
		table.Int64Col("test_samples", []int64{int64(s.TestSamples)}),
		table.Float64Col("accuracy_client_mean", []float64{s.Mean}),
		table.Float64Col("accuracy_client_std", []float64{s.Std}),
		table.Float64Col("accuracy_pooled", []float64{s.Pooled}),
		table.Float64Col("loss_pooled", []float64{s.MeanLoss}),
		table.Float64Col("best_accuracy_client_mean", []float64{s.Best.Mean}),
		table.Int64Col("best_round_client_mean", []int64{int64(s.Best.MeanRound)}),
		table.Float64Col("best_accuracy_pooled", []float64{s.Best.Pooled}),
		table.Int64Col("best_round_pooled", []int64{int64(s.Best.PooledRound)}),
	}}
}

// SummaryFromTable decodes a table written by SummaryTable.
func SummaryFromTable(t *table.Table) (Summary, error) {
	get := func(name string) (*table.Column, error) {
		c := t.Col(name)
		if c == nil || len(c.Int64)+len(c.Float64) != 1 {
			return nil, fmt.Errorf("summary table: column %q missing or not one row", name)
		}
		return c, nil
	}
	var s Summary
	for _, f := range []struct {
		name string
		i    *int
		f    *float64
	}{{"clients", &s.Clients, nil}, {"test_samples", &s.TestSamples, nil},
		{"accuracy_client_mean", nil, &s.Mean}, {"accuracy_client_std", nil, &s.Std},
		{"accuracy_pooled", nil, &s.Pooled}, {"loss_pooled", nil, &s.MeanLoss},
		{"best_accuracy_client_mean", nil, &s.Best.Mean}, {"best_round_client_mean", &s.Best.MeanRound, nil},
		{"best_accuracy_pooled", nil, &s.Best.Pooled}, {"best_round_pooled", &s.Best.PooledRound, nil}} {
		c, err := get(f.name)
		if err != nil {
			return s, err
		}
		if f.i != nil {
			*f.i = int(c.Int64[0])
		} else {
			*f.f = c.Float64[0]
		}
	}
	return s, nil
}
