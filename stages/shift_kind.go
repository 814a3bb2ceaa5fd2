package stages

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/shift"
	"github.com/fedpipe/fedpipe/stages/train"
)

// shift evaluates the final models (fine-tuned as the run asks) under each test-time shift
// of the manifest: per client, per shift, and summarized as mean ± std over clients and
// pooled. Degree 0 is each client's own test split, so it reproduces the unshifted figures.
// Real CIFAR-10-C corruptions (shift.cifar10c) replace each client's test samples by
// CIFAR-10-C images as shift.CIFAR10CIndices says, normalized as the run's CIFAR-10 is; their
// rows count how many were the samples' own versions and how many same-class draws.
func (env *Env) shift(_ context.Context, sc Context) (Outputs, error) {
	spec := sc.Manifest().Shift
	fin, err := env.loadFinal(sc)
	if err != nil {
		return nil, err
	}
	defer fin.model.Close()
	ds, a, model, models := fin.ds, fin.assign, fin.model, fin.models
	ev, err := train.FinalEvaluator(model, fin.method, sc.Run(), ds, a, models, fin.global)
	if err != nil {
		return nil, err
	}
	var pool []int
	for _, t := range a.Test {
		pool = append(pool, t...)
	}
	var rows []results.ShiftClient
	total := len(spec.Degrees) + (len(spec.Corruptions)+len(spec.CIFAR10C))*len(spec.Severities) + len(spec.LabelAlpha)
	step := 0
	eval := func(kind string, level float64, c int, x []float32, y []int32) error {
		m, err := ev.Evaluate(c, x, y)
		if err != nil {
			return err
		}
		rows = append(rows, results.ShiftClient{Shift: kind, Level: level,
			Client: summary.Client{Client: c, Samples: m.Samples, Loss: m.Loss, Accuracy: m.Accuracy}})
		return nil
	}
	for _, d := range spec.Degrees {
		for c := range models {
			x, y := ds.Gather(shift.MixDegree(a.Test[c], pool, d, sc.Run().Seed, c))
			if err := eval("degree", d, c, x, y); err != nil {
				return nil, err
			}
		}
		step++
		sc.Progress(step, total, fmt.Sprintf("degree %v", d))
	}
	for _, alpha := range spec.LabelAlpha {
		for c := range models {
			x, y := ds.Gather(shift.LabelShift(a.Test[c], pool, ds.Y, ds.Classes, alpha, sc.Run().Seed, c))
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
				xc, err := shift.Corrupt(ds, x, name, sev, sc.Run().Seed, c)
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
	if len(spec.CIFAR10C) > 0 {
		c10c, err := env.cifar10cRows(sc, ds, a.Test, len(models), ev, func(note string) { step++; sc.Progress(step, total, note) })
		if err != nil {
			return nil, err
		}
		rows = append(rows, c10c...)
	}
	meta := map[string]string{"run": sc.Run().Label(), "config": sc.Run().Config(), "seed": strconv.FormatInt(sc.Run().Seed, 10)}
	omit := results.CIFAR10CColumns
	if len(spec.CIFAR10C) > 0 {
		meta["cifar10c"] = cifar10cRule
		meta["cifar10c_digest"] = sc.ShiftFilesDigest()
		omit = nil
	}
	cb, err := results.Encode(rows, nil, omit...)
	if err != nil {
		return nil, err
	}
	sb, err := results.Encode(shiftSummaries(rows), meta, omit...)
	if err != nil {
		return nil, err
	}
	return Outputs{results.OutShiftClients: cb, results.OutShiftSummary: sb}, nil
}

// cifar10cRule says in the shift summary's metadata how CIFAR-10-C rows were made.
const cifar10cRule = "test samples from CIFAR-10's official test split are replaced by their own CIFAR-10-C version (cifar10c_own); " +
	"the others by a CIFAR-10-C image of the same class drawn per client (cifar10c_drawn), the same images at every corruption and severity"

// cifar10cRows evaluates every client under each real CIFAR-10-C corruption and severity
// of the shift block, reading one corruption file at a time; step is called after each
// (corruption, severity) with a progress note.
func (env *Env) cifar10cRows(sc Context, ds *data.Dataset, test [][]int, clients int, ev train.Evaluator, step func(string)) ([]results.ShiftClient, error) {
	spec := sc.Manifest().Shift
	files, err := env.Loader.FindCIFAR10C(spec.CIFAR10CPath, spec.CIFAR10C)
	if err != nil {
		return nil, err
	}
	if files.Digest != sc.ShiftFilesDigest() {
		return nil, fmt.Errorf("CIFAR-10-C files in %s changed while running (digest %s, planned %s)", files.Dir, files.Digest, sc.ShiftFilesDigest())
	}
	if err := files.Check(ds); err != nil {
		return nil, err
	}
	idx := make([][]int, clients)
	own := make([]int, clients)
	for c := range idx {
		if idx[c], own[c], err = shift.CIFAR10CIndices(test[c], ds.Y, ds.TestStart, files.Labels, sc.Run().Seed, c); err != nil {
			return nil, err
		}
	}
	const size = 32 * 32 * 3
	var rows []results.ShiftClient
	for _, name := range spec.CIFAR10C {
		pix, err := files.Images(name)
		if err != nil {
			return nil, err
		}
		kind := manifest.CIFAR10CKind(name)
		for _, sev := range spec.Severities {
			block := pix[(sev-1)*files.PerSeverity*size : sev*files.PerSeverity*size]
			for c := range clients {
				raw := make([]byte, 0, len(idx[c])*size)
				y := make([]int32, len(idx[c]))
				for p, j := range idx[c] {
					raw = append(raw, block[j*size:(j+1)*size]...)
					y[p] = files.Labels[j]
				}
				m, err := ev.Evaluate(c, ds.NormalizeBytes(raw), y)
				if err != nil {
					return nil, err
				}
				rows = append(rows, results.ShiftClient{Shift: kind, Level: float64(sev), Own: own[c], Drawn: len(idx[c]) - own[c],
					Client: summary.Client{Client: c, Samples: m.Samples, Loss: m.Loss, Accuracy: m.Accuracy}})
			}
			step(fmt.Sprintf("%s %d", kind, sev))
		}
	}
	return rows, nil
}

// shiftSummaries summarizes per-client rows per shift and level (mean ± std over clients
// and pooled, in the order the shifts were run), totalling the CIFAR-10-C replacement
// counts.
func shiftSummaries(rows []results.ShiftClient) []results.ShiftSummary {
	type key struct {
		kind  string
		level float64
	}
	var order []key
	groups := map[key][]summary.Client{}
	for _, r := range rows {
		k := key{r.Shift, r.Level}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r.Client)
	}
	out := make([]results.ShiftSummary, len(order))
	for i, k := range order {
		var o, d int
		for _, r := range rows {
			if r.Shift == k.kind && r.Level == k.level {
				o, d = o+r.Own, d+r.Drawn
			}
		}
		s := summary.Summarize(groups[k])
		out[i] = results.ShiftSummary{Shift: k.kind, Level: k.level, Mean: s.Mean, Std: s.Std, Pooled: s.Pooled, Own: o, Drawn: d}
	}
	return out
}
