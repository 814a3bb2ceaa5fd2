package stages

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/evaluate"
	"github.com/fedpipe/fedpipe/stages/shift"
	"github.com/fedpipe/fedpipe/stages/train"
)

// shiftRow is one client's result under one shift.
type shiftRow struct {
	kind  string // "degree" or a corruption name
	level float64
	evaluate.Client
}

// shift evaluates the final models (fine-tuned as the run asks) under each test-time shift
// of the manifest: per client, per shift, and summarized as mean ± std over clients and
// pooled. Degree 0 is each client's own test split, so it reproduces the unshifted figures.
func (env *Env) shift(_ context.Context, sc *pipeline.StageContext) (pipeline.Outputs, error) {
	n := sc.Node
	spec := sc.Manifest().Shift
	fin, err := env.loadFinal(sc)
	if err != nil {
		return nil, err
	}
	defer fin.model.Close()
	ds, a, model, models := fin.ds, fin.assign, fin.model, fin.models
	ev, err := train.FinalEvaluator(model, n.Run, ds, a, models, fin.global)
	if err != nil {
		return nil, err
	}
	var pool []int
	for _, t := range a.Test {
		pool = append(pool, t...)
	}
	var rows []shiftRow
	total := len(spec.Degrees) + len(spec.Corruptions)*len(spec.Severities) + len(spec.LabelAlpha)
	step := 0
	eval := func(kind string, level float64, c int, x []float32, y []int32) error {
		m, err := ev.Evaluate(c, x, y)
		if err != nil {
			return err
		}
		rows = append(rows, shiftRow{kind: kind, level: level,
			Client: evaluate.Client{Client: c, Samples: m.Samples, Loss: m.Loss, Accuracy: m.Accuracy}})
		return nil
	}
	for _, d := range spec.Degrees {
		for c := range models {
			x, y := ds.Gather(shift.MixDegree(a.Test[c], pool, d, n.Run.Seed, c))
			if err := eval("degree", d, c, x, y); err != nil {
				return nil, err
			}
		}
		step++
		sc.Progress(step, total, fmt.Sprintf("degree %v", d))
	}
	for _, alpha := range spec.LabelAlpha {
		for c := range models {
			x, y := ds.Gather(shift.LabelShift(a.Test[c], pool, ds.Y, ds.Classes, alpha, n.Run.Seed, c))
			if err := eval("label", alpha, c, x, y); err != nil {
				return nil, err
			}
		}
		step++
		sc.Progress(step, total, fmt.Sprintf("label alpha %v", alpha))
	}
	for _, name := range spec.Corruptions {
		for _, sev := range spec.Severities {
			for c := range models {
				x, y := ds.Gather(a.Test[c])
				xc, err := shift.Corrupt(ds, x, name, sev, n.Run.Seed, c)
				if err != nil {
					return nil, err
				}
				if err := eval(name, float64(sev), c, xc, y); err != nil {
					return nil, err
				}
			}
			step++
			sc.Progress(step, total, fmt.Sprintf("%s %d", name, sev))
		}
	}
	clients, summary := shiftTables(rows)
	summary.Meta = map[string]string{"run": n.Run.Label(), "config": n.Run.Config(), "seed": strconv.FormatInt(n.Run.Seed, 10)}
	cb, err := table.Encode(clients)
	if err != nil {
		return nil, err
	}
	sb, err := table.Encode(summary)
	if err != nil {
		return nil, err
	}
	return pipeline.Outputs{"clients": cb, "summary": sb}, nil
}

// shiftTables encodes per-client rows and their per-shift summaries (mean ± std over
// clients and pooled, in the order the shifts were run).
func shiftTables(rows []shiftRow) (*table.Table, *table.Table) {
	var kind []string
	var level, loss, acc []float64
	var client, samples []int64
	type key struct {
		kind  string
		level float64
	}
	var order []key
	groups := map[key][]evaluate.Client{}
	for _, r := range rows {
		kind = append(kind, r.kind)
		level = append(level, r.level)
		client = append(client, int64(r.Client.Client))
		samples = append(samples, int64(r.Samples))
		loss = append(loss, r.Loss)
		acc = append(acc, r.Accuracy)
		k := key{r.kind, r.level}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r.Client)
	}
	clients := &table.Table{Columns: []table.Column{
		table.StringCol("shift", kind), table.Float64Col("level", level), table.Int64Col("client", client),
		table.Int64Col("samples", samples), table.Float64Col("loss", loss), table.Float64Col("accuracy", acc),
	}}
	var sKind []string
	var sLevel, sMean, sStd, sPooled []float64
	for _, k := range order {
		s := evaluate.Summarize(groups[k])
		sKind = append(sKind, k.kind)
		sLevel = append(sLevel, k.level)
		sMean = append(sMean, s.Mean)
		sStd = append(sStd, s.Std)
		sPooled = append(sPooled, s.Pooled)
	}
	summary := &table.Table{Columns: []table.Column{
		table.StringCol("shift", sKind), table.Float64Col("level", sLevel),
		table.Float64Col("accuracy_client_mean", sMean), table.Float64Col("accuracy_client_std", sStd),
		table.Float64Col("accuracy_pooled", sPooled),
	}}
	return clients, summary
}
