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

	// Every method registers itself (train.Register) when its package is linked.
	_ "github.com/fedpipe/fedpipe/stages/train/methods"
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
	a, err := partition.Make(ds, sc.Run().Dataset, sc.Run().Partition, sc.Run().PartitionSeed())
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

func (env *Env) train(ctx context.Context, sc Context) (Outputs, error) {
	ds, err := env.dataset(sc)
	if err != nil {
		return nil, err
	}
	a, err := env.assignment(sc, 0)
	if err != nil {
		return nil, err
	}
	cfg := train.Config{Run: sc.Run(), Data: ds, Assign: a, Backend: env.Backend, Lockstep: train.LockstepDefault(env.Backend),
		Checkpoint: func(st *train.State) error {
			return sc.SaveCheckpoint(st.Round, func(put func(string, []byte) error) error {
				return train.WriteCheckpoint(st, put)
			})
		},
		Progress: func(round, rounds int, note string) { sc.Progress(round, rounds, note) },
	}
	if round, blobs, ok := sc.LoadCheckpoint(); ok {
		if st, err := train.DecodeState(blobs, a.Clients(), sc.Run()); err == nil && st.Round == round {
			cfg.Resume = st
			sc.Resumed(round)
		}
	}
	if st, ok := extension(sc, a.Clients()); ok && (cfg.Resume == nil || cfg.Resume.Round < st.Round) {
		cfg.Resume = st
		sc.Resumed(st.Round)
	}
	st, err := train.Run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// The outputs derived from the state first; then the state itself, moved into its blobs.
	out := map[string][]byte{}
	if train.PersonalModels(sc.Run()) {
		// One client's model at a time: a list of every client's would sit beside the state
		// and its encoding (100 FedOBP clients: 230 MB more at the run's peak).
		err := train.EachEvalModel(sc.Run(), st, a.Clients(), func(c int, m tensor.List) {
			out[clientName("model", c)] = tensor.Encode(m)
		})
		if err != nil {
			return nil, err
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
	err = train.MoveState(st, func(name string, b []byte) error {
		if _, dup := out[name]; dup {
			return fmt.Errorf("train stage output %q written twice", name)
		}
		out[name] = b
		return nil
	})
	if err != nil {
		return nil, err
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
	mb, err := sc.Input(0, "metrics")
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
		if final, finalFT, err = train.EvaluateFinal(model, sc.Run(), ds, a, models, fin.global); err != nil {
			return nil, err
		}
	}
	clientRows := func(final []train.Metric) []evaluate.Client {
		rows := make([]evaluate.Client, len(final))
		for c, m := range final {
			rows[c] = evaluate.Client{Client: c, Samples: m.Samples, Loss: m.Loss, Accuracy: m.Accuracy}
		}
		return rows
	}
	rows := clientRows(final)
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
