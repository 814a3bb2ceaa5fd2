package stages

import (
	"context"
	"strconv"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
	"github.com/fedpipe/fedpipe/stages/train"
)

func (env *Env) evaluate(_ context.Context, sc Context) (Outputs, error) {
	fin, err := env.loadFinal(sc)
	if err != nil {
		return nil, err
	}
	defer fin.model.Close()
	ds, a, model, models := fin.ds, fin.assign, fin.model, fin.models
	mb, err := sc.Input(manifest.KindTrain, results.OutTrainMetrics)
	if err != nil {
		return nil, err
	}
	history, _, err := results.Decode[results.Metric](mb)
	if err != nil {
		return nil, err
	}
	// The train stage's last evaluation already scored the final models, before and after
	// fine-tuning.
	final, finalFT, ok := train.FinalFromHistory(sc.Run(), history, a.Clients())
	if !ok {
		if final, finalFT, err = train.EvaluateFinal(model, fin.method, sc.Run(), ds, a, models, fin.global); err != nil {
			return nil, err
		}
	}
	clientRows := func(final []train.Metric) []summary.Client {
		rows := make([]summary.Client, len(final))
		for c, m := range final {
			rows[c] = summary.Client{Client: c, Samples: m.Samples, Loss: m.Loss, Accuracy: m.Accuracy}
		}
		return rows
	}
	rows := clientRows(final)
	s := summary.Summarize(rows)
	s.Best = summary.BestOf(history)
	if finalFT != nil {
		best, _ := summary.BestOfFT(history)
		summary.WithFT(&s, clientRows(finalFT), best)
	}
	meta := map[string]string{"run": sc.Run().Label(), "config": sc.Run().Config(), "method": sc.Run().Method, "seed": strconv.FormatInt(sc.Run().Seed, 10)}
	if cb, err := sc.Input(manifest.KindTrain, results.OutTrainCost); err == nil {
		costs, _, err := results.Decode[results.Cost](cb)
		if err != nil {
			return nil, err
		}
		mc := train.MeanCost(costs)
		meta["mb_up"], meta["mb_down"], meta["flops"] = fmtFloat(mc.MBUp), fmtFloat(mc.MBDown), fmtFloat(mc.FLOPs)
	}
	clients, err := results.Encode(rows, nil)
	if err != nil {
		return nil, err
	}
	var omit []string // a run without fine-tuning stores no after-fine-tuning columns
	if finalFT == nil {
		omit = results.FinetunedColumns
	}
	summaryTable, err := results.Encode([]results.Summary{s}, meta, omit...)
	if err != nil {
		return nil, err
	}
	return Outputs{results.OutEvaluateClients: clients, results.OutEvaluateSummary: summaryTable}, nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
