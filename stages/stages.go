package stages

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/results"
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
func Funcs(env *Env) map[string]Func {
	return map[string]Func{
		manifest.KindPartition: env.partition,
		manifest.KindTrain:     env.train,
		manifest.KindEvaluate:  env.evaluate,
		manifest.KindReport:    env.report,
		manifest.KindShift:     env.shift,
	}
}

// dataset loads a node's dataset and checks it is the one the graph was planned with.
func (env *Env) dataset(sc Context) (*data.Dataset, error) {
	ds, err := env.Loader.Load(sc.Run().Dataset)
	if err != nil {
		return nil, err
	}
	if ds.Digest != sc.Data().Digest {
		return nil, fmt.Errorf("dataset %s changed while running (digest %s, planned %s)", ds.Name, ds.Digest, sc.Data().Digest)
	}
	return ds, nil
}

func (env *Env) partition(_ context.Context, sc Context) (Outputs, error) {
	ds, err := env.dataset(sc)
	if err != nil {
		return nil, err
	}
	a, err := partition.Make(ds, sc.Run().Dataset, sc.Run().Partition, sc.Run().Seed)
	if err != nil {
		return nil, err
	}
	b, err := a.Encode(ds)
	if err != nil {
		return nil, err
	}
	return Outputs{"assignment": b}, nil
}

func (env *Env) assignment(sc Context, input int) (*partition.Assignment, error) {
	b, err := sc.Input(input, "assignment")
	if err != nil {
		return nil, err
	}
	return partition.Decode(b)
}

func clientName(prefix string, c int) string { return fmt.Sprintf("%s/%05d", prefix, c) }

// encodeState turns a training state into named blobs: a checkpoint, and the bulk of a
// train stage's outputs. Per-client tensors a method has not set are left out.
func encodeState(st *train.State) (Outputs, error) {
	out := Outputs{"global": tensor.Encode(st.Global)}
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
	var err error
	if out["metrics"], err = results.Encode(st.Metrics, map[string]string{"round": strconv.Itoa(st.Round)}); err != nil {
		return nil, err
	}
	if out["selection"], err = results.Encode(st.Selection, nil); err != nil {
		return nil, err
	}
	if out["comm"], err = results.Encode(st.Comm, nil); err != nil {
		return nil, err
	}
	if out["work"], err = results.Encode(st.Work, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeState reverses encodeState for a run whose method is def.
func decodeState(blobs map[string][]byte, clients int, r *manifest.Run) (*train.State, error) {
	st := &train.State{}
	var err error
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
	var meta map[string]string
	if st.Metrics, meta, err = results.Decode[results.Metric](blobs["metrics"]); err != nil {
		return nil, err
	}
	if st.Round, err = strconv.Atoi(meta["round"]); err != nil {
		return nil, fmt.Errorf("checkpoint has no round")
	}
	if st.Selection, _, err = results.Decode[results.Selection](blobs["selection"]); err != nil {
		return nil, err
	}
	if st.Comm, _, err = results.Decode[results.Comm](blobs["comm"]); err != nil {
		return nil, err
	}
	if b, ok := blobs["work"]; ok {
		if st.Work, _, err = results.Decode[results.Work](b); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (env *Env) train(ctx context.Context, sc Context) (Outputs, error) {
	ds, err := env.dataset(sc)
	if err != nil {
		return nil, err
	}
	a, err := env.assignment(sc, 0)
	if err != nil {
		return nil, err
	}
	cfg := train.Config{Run: sc.Run(), Data: ds, Assign: a, Backend: env.Backend,
		Checkpoint: func(st *train.State) error {
			blobs, err := encodeState(st)
			if err != nil {
				return err
			}
			return sc.SaveCheckpoint(st.Round, blobs)
		},
		Progress: func(round, rounds int, note string) { sc.Progress(round, rounds, note) },
	}
	if round, blobs, ok := sc.LoadCheckpoint(); ok {
		if st, err := decodeState(blobs, a.Clients(), sc.Run()); err == nil && st.Round == round {
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
	if train.PersonalModels(sc.Run()) {
		models, err := train.EvalModels(sc.Run(), st, a.Clients())
		if err != nil {
			return nil, err
		}
		for c, m := range models {
			out[clientName("model", c)] = tensor.Encode(m)
		}
	}
	if g, ok, err := train.EvalGlobal(sc.Run(), st); err != nil {
		return nil, err
	} else if ok {
		out["model/global"] = tensor.Encode(g)
	}
	if out["cost"], err = results.Encode(train.Costs(st.Comm, st.Work, a.Clients()), nil); err != nil {
		return nil, err
	}
	if st.Masks != nil {
		if out["mask_iou"], err = results.Encode(train.PairwiseIoU(st.Masks), nil); err != nil {
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
func (env *Env) loadFinal(sc Context) (*final, error) {
	ds, err := env.dataset(sc)
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
	if train.NeedsGlobal(sc.Run()) {
		b, err := sc.Input(0, "model/global")
		if err != nil {
			return nil, err
		}
		if global, err = tensor.Decode(b); err != nil {
			return nil, err
		}
	}
	model, err := model.NewModel(env.Backend, train.ModelSpec(sc.Run(), ds))
	if err != nil {
		return nil, err
	}
	return &final{ds: ds, assign: a, model: model, models: models, global: global}, nil
}

// finalModels reads the model each client is evaluated with from the train stage (input 0).
func finalModels(sc Context, clients int) ([]tensor.List, error) {
	personal := train.PersonalModels(sc.Run())
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

func (env *Env) evaluate(_ context.Context, sc Context) (Outputs, error) {
	fin, err := env.loadFinal(sc)
	if err != nil {
		return nil, err
	}
	defer fin.model.Close()
	ds, a, model, models := fin.ds, fin.assign, fin.model, fin.models
	final, finalFT, err := train.EvaluateFinal(model, sc.Run(), ds, a, models, fin.global)
	if err != nil {
		return nil, err
	}
	clientRows := func(final []train.Metric) []evaluate.Client {
		rows := make([]evaluate.Client, len(final))
		for c, m := range final {
			rows[c] = evaluate.Client{Client: c, Samples: m.Samples, Loss: m.Loss, Accuracy: m.Accuracy}
		}
		return rows
	}
	rows := clientRows(final)
	mb, err := sc.Input(0, "metrics")
	if err != nil {
		return nil, err
	}
	history, _, err := results.Decode[results.Metric](mb)
	if err != nil {
		return nil, err
	}
	s := evaluate.Summarize(rows)
	s.Best = evaluate.BestOf(history)
	if finalFT != nil {
		best, _ := evaluate.BestOfFT(history)
		evaluate.WithFT(&s, clientRows(finalFT), best)
	}
	meta := map[string]string{"run": sc.Run().Label(), "config": sc.Run().Config(), "method": sc.Run().Method, "seed": strconv.FormatInt(sc.Run().Seed, 10)}
	if cb, err := sc.Input(0, "cost"); err == nil {
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
	summary, err := results.Encode([]results.Summary{s}, meta, omit...)
	if err != nil {
		return nil, err
	}
	return Outputs{"clients": clients, "summary": summary}, nil
}

func (env *Env) report(_ context.Context, sc Context) (Outputs, error) {
	entries := make([]report.Entry, len(sc.Runs()))
	var costs []report.CostEntry
	for i, r := range sc.Runs() {
		b, err := sc.Input(i, "summary")
		if err != nil {
			return nil, err
		}
		s, meta, err := results.DecodeOne[results.Summary](b)
		if err != nil {
			return nil, err
		}
		entries[i] = report.Entry{Config: r.Config(), Method: r.Method, Seed: r.Seed, Summary: s}
		if c, ok := report.CostEntryFromSummary(meta, r.Config(), r.Method); ok {
			costs = append(costs, c)
		}
	}
	m := sc.Manifest()
	md := report.Markdown(m.Name, m.Description, entries) + report.CostMarkdown(costs)
	var shifts []report.ShiftEntry
	for i := len(sc.Runs()); i < sc.NumInputs(); i++ {
		b, err := sc.Input(i, "summary")
		if err != nil {
			return nil, err
		}
		e, err := report.DecodeShiftEntry(b)
		if err != nil {
			return nil, err
		}
		shifts = append(shifts, e)
	}
	md += report.ShiftMarkdown(shifts)
	runs, err := results.Encode(report.Runs(entries), nil)
	if err != nil {
		return nil, err
	}
	return Outputs{"report.md": []byte(md), "runs": runs}, nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
