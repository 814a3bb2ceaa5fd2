package stages

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/evaluate"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/report"
	"github.com/fedpipe/fedpipe/stages/train"
)

// Env is what the stage implementations share within one invocation.
type Env struct {
	Loader *data.Loader
	// Backend is the resolved GoMLX backend name.
	Backend string
}

// Funcs returns the implementation of every stage kind.
func Funcs(env *Env) map[string]pipeline.StageFunc {
	return map[string]pipeline.StageFunc{
		pipeline.KindPartition: env.partition,
		pipeline.KindTrain:     env.train,
		pipeline.KindEvaluate:  env.evaluate,
		pipeline.KindReport:    env.report,
		pipeline.KindShift:     env.shift,
	}
}

// dataset loads a node's dataset and checks it is the one the graph was planned with.
func (env *Env) dataset(n *pipeline.Node) (*data.Dataset, error) {
	ds, err := env.Loader.Load(n.Run.Dataset)
	if err != nil {
		return nil, err
	}
	if ds.Digest != n.Data.Digest {
		return nil, fmt.Errorf("dataset %s changed while running (digest %s, planned %s)", ds.Name, ds.Digest, n.Data.Digest)
	}
	return ds, nil
}

func (env *Env) partition(_ context.Context, sc *pipeline.StageContext) (pipeline.Outputs, error) {
	n := sc.Node
	ds, err := env.dataset(n)
	if err != nil {
		return nil, err
	}
	a, err := partition.Make(ds, n.Run.Dataset, n.Run.Partition, n.Run.Seed)
	if err != nil {
		return nil, err
	}
	b, err := table.Encode(a.Table(ds))
	if err != nil {
		return nil, err
	}
	return pipeline.Outputs{"assignment": b}, nil
}

func (env *Env) assignment(sc *pipeline.StageContext, input int) (*partition.Assignment, error) {
	b, err := sc.Input(input, "assignment")
	if err != nil {
		return nil, err
	}
	t, err := table.Decode(b)
	if err != nil {
		return nil, err
	}
	return partition.FromTable(t)
}

func clientName(prefix string, c int) string { return fmt.Sprintf("%s/%05d", prefix, c) }

// encodeState turns a training state into named blobs: the bulk of a train stage's outputs
// (checkpoints use encodeCheckpoint). Per-client tensors a method has not set are left out.
func encodeState(st *train.State) (pipeline.Outputs, error) {
	out := encodeModels(st)
	if err := encodeTables(out, st); err != nil {
		return nil, err
	}
	return out, nil
}

// encodeModels encodes a state's tensors: the global model and the per-client ones.
func encodeModels(st *train.State) pipeline.Outputs {
	out := pipeline.Outputs{"global": tensor.Encode(st.Global)}
	for c, p := range st.Personal {
		if p != nil {
			out[clientName("personal", c)] = tensor.Encode(p)
		}
	}
	for c, m := range st.Masks {
		if m != nil {
			b := tensor.Bundle{}
			for _, t := range m {
				b.Masks = append(b.Masks, tensor.MaskOf(t))
			}
			out[clientName("mask", c)] = tensor.EncodeBundle(b)
		}
	}
	for name, lists := range st.Aux {
		for c, l := range lists {
			if l != nil {
				out[clientName("aux/"+name, c)] = tensor.Encode(l)
			}
		}
	}
	return out
}

// encodeTables adds a state's per-round tables to out: metrics (with the round in its
// metadata), selection, comm and work.
func encodeTables(out pipeline.Outputs, st *train.State) error {
	mt := train.MetricsTable(st.Metrics)
	mt.Meta = map[string]string{"round": strconv.Itoa(st.Round)}
	var err error
	if out["metrics"], err = table.Encode(mt); err != nil {
		return err
	}
	if out["selection"], err = table.Encode(train.SelectionTable(st.Selection)); err != nil {
		return err
	}
	if out["comm"], err = table.Encode(train.CommTable(st.Comm)); err != nil {
		return err
	}
	if out["work"], err = table.Encode(train.WorkTable(st.Work)); err != nil {
		return err
	}
	return nil
}

// decodeState reverses encodeState, and encodeCheckpoint, for a run whose method is def.
func decodeState(blobs map[string][]byte, clients int, r *pipeline.Run) (*train.State, error) {
	st := &train.State{}
	var err error
	if _, chunked := blobs[checkpointRoundBlob]; chunked {
		whole := make(map[string][]byte, len(blobs))
		for k, v := range blobs {
			whole[k] = v
		}
		if _, err := joinChunks(whole); err != nil {
			return nil, err
		}
		blobs = whole
	}
	if st.Global, err = tensor.Decode(blobs["global"]); err != nil {
		return nil, err
	}
	// The method's own Init says which per-client slots exist; fill them from the blobs.
	m, err := train.NewRunMethod(r)
	if err != nil {
		return nil, err
	}
	m.Init(st, clients)
	for c := range st.Personal {
		st.Personal[c] = nil
		if b, ok := blobs[clientName("personal", c)]; ok {
			if st.Personal[c], err = tensor.Decode(b); err != nil {
				return nil, err
			}
		}
	}
	for c := range st.Masks {
		st.Masks[c] = nil
		if b, ok := blobs[clientName("mask", c)]; ok {
			bundle, err := tensor.DecodeBundle(b)
			if err != nil {
				return nil, err
			}
			for _, mk := range bundle.Masks {
				st.Masks[c] = append(st.Masks[c], mk.Tensor())
			}
		}
	}
	for name, lists := range st.Aux {
		for c := range lists {
			if b, ok := blobs[clientName("aux/"+name, c)]; ok {
				if lists[c], err = tensor.Decode(b); err != nil {
					return nil, err
				}
			}
		}
	}
	t, err := table.Decode(blobs["metrics"])
	if err != nil {
		return nil, err
	}
	if st.Metrics, err = train.MetricsFromTable(t); err != nil {
		return nil, err
	}
	if st.Round, err = strconv.Atoi(t.Meta["round"]); err != nil {
		return nil, fmt.Errorf("checkpoint has no round")
	}
	if t, err = table.Decode(blobs["selection"]); err != nil {
		return nil, err
	}
	if st.Selection, err = train.SelectionFromTable(t); err != nil {
		return nil, err
	}
	if t, err = table.Decode(blobs["comm"]); err != nil {
		return nil, err
	}
	if st.Comm, err = train.CommFromTable(t); err != nil {
		return nil, err
	}
	if b, ok := blobs["work"]; ok {
		if t, err = table.Decode(b); err != nil {
			return nil, err
		}
		if st.Work, err = train.WorkFromTable(t); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (env *Env) train(ctx context.Context, sc *pipeline.StageContext) (pipeline.Outputs, error) {
	n := sc.Node
	ds, err := env.dataset(n)
	if err != nil {
		return nil, err
	}
	a, err := env.assignment(sc, 0)
	if err != nil {
		return nil, err
	}
	cfg := train.Config{Run: n.Run, Data: ds, Assign: a, Backend: env.Backend,
		Checkpoint: func(st *train.State) error {
			blobs, err := encodeCheckpoint(st)
			if err != nil {
				return err
			}
			return sc.SaveCheckpoint(st.Round, blobs)
		},
		Progress: func(round, rounds int, note string) { sc.Progress(round, rounds, note) },
	}
	if round, blobs, ok := sc.LoadCheckpoint(); ok {
		if st, err := decodeState(blobs, a.Clients(), n.Run); err == nil && st.Round == round {
			cfg.Resume = st
			sc.Resumed(round)
		}
	}
	st, err := train.Run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	out, err := encodeState(st)
	if err != nil {
		return nil, err
	}
	if train.PersonalModels(n.Run) {
		models, err := train.EvalModels(n.Run, st, a.Clients())
		if err != nil {
			return nil, err
		}
		for c, m := range models {
			out[clientName("model", c)] = tensor.Encode(m)
		}
	}
	if g, ok, err := train.EvalGlobal(n.Run, st); err != nil {
		return nil, err
	} else if ok {
		out["model/global"] = tensor.Encode(g)
	}
	if out["cost"], err = table.Encode(train.CostTable(train.Costs(st.Comm, st.Work, a.Clients()))); err != nil {
		return nil, err
	}
	if st.Masks != nil {
		if out["mask_iou"], err = table.Encode(train.IoUTable(train.PairwiseIoU(st.Masks))); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// final is what the stages after training need: the data, the partition, a compiled
// model and each client's final model.
type final struct {
	ds     *data.Dataset
	assign *partition.Assignment
	model  *model.Model
	models []tensor.List
	// global is the global model of methods that infer with it beside the personal ones
	// (train.NeedsGlobal); nil otherwise.
	global tensor.List
}

// loadFinal reads a post-training stage's inputs (0: train, 1: partition). The caller
// closes the model.
func (env *Env) loadFinal(sc *pipeline.StageContext) (*final, error) {
	n := sc.Node
	ds, err := env.dataset(n)
	if err != nil {
		return nil, err
	}
	a, err := env.assignment(sc, 1)
	if err != nil {
		return nil, err
	}
	models, err := finalModels(sc, a.Clients())
	if err != nil {
		return nil, err
	}
	var global tensor.List
	if train.NeedsGlobal(n.Run) {
		b, err := sc.Input(0, "model/global")
		if err != nil {
			return nil, err
		}
		if global, err = tensor.Decode(b); err != nil {
			return nil, err
		}
	}
	model, err := model.NewModel(env.Backend, train.ModelSpec(n.Run, ds))
	if err != nil {
		return nil, err
	}
	return &final{ds: ds, assign: a, model: model, models: models, global: global}, nil
}

// finalModels reads the model each client is evaluated with from the train stage (input 0).
func finalModels(sc *pipeline.StageContext, clients int) ([]tensor.List, error) {
	personal := train.PersonalModels(sc.Node.Run)
	models := make([]tensor.List, clients)
	for c := range models {
		if c > 0 && !personal {
			models[c] = models[0]
			continue
		}
		name := "global"
		if personal {
			name = clientName("model", c)
		}
		b, err := sc.Input(0, name)
		if err != nil {
			return nil, err
		}
		if models[c], err = tensor.Decode(b); err != nil {
			return nil, err
		}
	}
	return models, nil
}

func (env *Env) evaluate(_ context.Context, sc *pipeline.StageContext) (pipeline.Outputs, error) {
	n := sc.Node
	fin, err := env.loadFinal(sc)
	if err != nil {
		return nil, err
	}
	defer fin.model.Close()
	ds, a, model, models := fin.ds, fin.assign, fin.model, fin.models
	mb, err := sc.Input(0, "metrics")
	if err != nil {
		return nil, err
	}
	mt, err := table.Decode(mb)
	if err != nil {
		return nil, err
	}
	history, err := train.MetricsFromTable(mt)
	if err != nil {
		return nil, err
	}
	// The train stage's last evaluation already fine-tuned and scored the final models.
	final, ok := train.FinalFromHistory(n.Run, history, a.Clients())
	if !ok {
		if final, err = train.EvaluateFinal(model, n.Run, ds, a, models, fin.global); err != nil {
			return nil, err
		}
	}
	rows := make([]evaluate.Client, len(final))
	for c, m := range final {
		rows[c] = evaluate.Client{Client: c, Samples: m.Samples, Loss: m.Loss, Accuracy: m.Accuracy}
	}
	s := evaluate.Summarize(rows)
	s.Best = evaluate.BestOf(history)
	meta := map[string]string{"run": n.Run.Label(), "config": n.Run.Config(), "method": n.Run.Method, "seed": strconv.FormatInt(n.Run.Seed, 10)}
	if cb, err := sc.Input(0, "cost"); err == nil {
		ct, err := table.Decode(cb)
		if err != nil {
			return nil, err
		}
		var costs []train.Cost
		for i := 0; i < ct.NumRows(); i++ {
			costs = append(costs, train.Cost{MBDown: ct.Col("mb_down").Float64[i], MBUp: ct.Col("mb_up").Float64[i], FLOPs: ct.Col("flops").Float64[i]})
		}
		mc := train.MeanCost(costs)
		meta["mb_up"], meta["mb_down"], meta["flops"] = fmtFloat(mc.MBUp), fmtFloat(mc.MBDown), fmtFloat(mc.FLOPs)
	}
	clients, err := table.Encode(evaluate.ClientsTable(rows))
	if err != nil {
		return nil, err
	}
	summary, err := table.Encode(evaluate.SummaryTable(s, meta))
	if err != nil {
		return nil, err
	}
	return pipeline.Outputs{"clients": clients, "summary": summary}, nil
}

func (env *Env) report(_ context.Context, sc *pipeline.StageContext) (pipeline.Outputs, error) {
	n := sc.Node
	entries := make([]report.Entry, len(n.Runs))
	var costs []report.CostEntry
	for i, r := range n.Runs {
		b, err := sc.Input(i, "summary")
		if err != nil {
			return nil, err
		}
		t, err := table.Decode(b)
		if err != nil {
			return nil, err
		}
		s, err := evaluate.SummaryFromTable(t)
		if err != nil {
			return nil, err
		}
		entries[i] = report.Entry{Config: r.Config(), Method: r.Method, Seed: r.Seed, Summary: s}
		if c, ok := report.CostEntryFromSummary(t, r.Config(), r.Method); ok {
			costs = append(costs, c)
		}
	}
	m := sc.Manifest()
	md := report.Markdown(m.Name, m.Description, entries) + report.CostMarkdown(costs)
	var shifts []report.ShiftEntry
	for i := len(n.Runs); i < len(n.Inputs); i++ {
		b, err := sc.Input(i, "summary")
		if err != nil {
			return nil, err
		}
		t, err := table.Decode(b)
		if err != nil {
			return nil, err
		}
		e, err := report.ShiftEntryFromTable(t)
		if err != nil {
			return nil, err
		}
		shifts = append(shifts, e)
	}
	md += report.ShiftMarkdown(shifts)
	runs, err := table.Encode(report.Table(entries))
	if err != nil {
		return nil, err
	}
	return pipeline.Outputs{"report.md": []byte(md), "runs": runs}, nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
