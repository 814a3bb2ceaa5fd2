package main

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/safetensors"
	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
)

// withIdentity appends to a stage's exported table the identity of the run it belongs to,
// repeated on every row — manifest, stage, run (its label), method, seed and each swept
// parameter (grid path with "." as "_", e.g. train_lr) — so that tables read together (a
// DuckDB glob, pandas concat) keep which run each row came from without parsing folder
// names. Columns the table already has are left alone. It reports whether it added any.
//
// A partition is shared by every run of its seed and data settings, so it carries its own
// identity, not one run's: run is the stage's name ("partition alpha=0.1 seed=0"), seed the
// partition's seed, the swept parameters only its dataset.* and partition.* ones, and no
// method.
func withIdentity(t *table.Table, g *pipeline.Graph, n *pipeline.Node) bool {
	rows := t.NumRows()
	added := false
	add := func(c table.Column) { // a column the table does not have yet
		if t.Col(c.Name) == nil {
			t.Columns = append(t.Columns, c)
			added = true
		}
	}
	addString := func(name, v string) { add(table.StringCol(name, repeat(v, rows))) }
	addFloat := func(name string, v float64) { add(table.Float64Col(name, repeat(v, rows))) }
	addString("manifest", g.Manifest.Name)
	addString("stage", n.Kind)
	addString("stage_key", n.Key.String()[:12])
	if n.Run == nil {
		return withRunsGrid(t, g) || added
	}
	r := n.Run
	shared := n.Kind == manifest.KindPartition
	seed := r.Seed
	if shared {
		addString("run", n.Name)
		seed = r.PartitionSeed()
	} else {
		addString("run", r.Label())
		addString("method", r.MethodName)
	}
	add(table.Int64Col("seed", repeat(seed, rows)))
	for _, a := range r.Vary {
		if shared && !pipeline.PartitionSetting(a.Path) {
			continue // a setting of the runs, not of their shared partition
		}
		name := strings.ReplaceAll(a.Path, ".", "_")
		if f, err := strconv.ParseFloat(a.Value, 64); err == nil {
			addFloat(name, f)
			continue
		}
		addString(name, a.Value)
	}
	// The effective settings, flat, so that exports of runs that differ only by an override
	// (-S train.rounds=40) stay apart when concatenated; the run's key names it exactly.
	addString("dataset_name", r.Dataset.Name)
	addString("partition_scheme", r.Partition.Scheme)
	addFloat("partition_clients", float64(r.Partition.Clients))
	addFloat("partition_alpha", r.Partition.Alpha)
	if shared {
		return added
	}
	if k := trainKey(g, r); k != "" {
		addString("run_key", k)
	}
	addString("model_arch", r.Model.Arch)
	addFloat("train_rounds", float64(r.Train.Rounds))
	addFloat("train_lr", r.Train.LR)
	addFloat("train_local_epochs", float64(r.Train.LocalEpochs))
	addFloat("train_batch_size", float64(r.Train.BatchSize))
	addFloat("train_participation", r.Train.Participation)
	addFloat("train_momentum", r.Train.Momentum)
	addFloat("train_weight_decay", r.Train.WeightDecay)
	addFloat("train_finetune_epochs", float64(r.Train.FinetuneEpochs))
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		addFloat("params_"+k, r.Params[k])
	}
	for _, k := range slices.Sorted(maps.Keys(r.Options)) {
		addString("options_"+k, r.Options[k])
	}
	return added
}

// repeat is n copies of v.
func repeat[T any](v T, n int) []T {
	vs := make([]T, n)
	for i := range vs {
		vs[i] = v
	}
	return vs
}

// withRunsGrid adds to a table with a row per run (the report's runs table: its "run"
// column holds run labels) each run's swept parameters, as columns named as withIdentity names
// them (train_lr), its method's display name (display) and its key (run_key), row by row. It
// reports whether it added any.
func withRunsGrid(t *table.Table, g *pipeline.Graph) bool {
	label := t.Col("run")
	if label == nil || t.Col("display") != nil {
		return false
	}
	runs := map[string]*manifest.Run{}
	var paths []string
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		if n.Kind != manifest.KindTrain || n.Run == nil {
			continue
		}
		runs[n.Run.Label()] = n.Run
		for _, a := range n.Run.Vary {
			if !seen[a.Path] {
				seen[a.Path] = true
				paths = append(paths, a.Path)
			}
		}
	}
	rows := t.NumRows()
	display, keys := make([]string, rows), make([]string, rows)
	for i, l := range label.String {
		if r := runs[l]; r != nil {
			display[i] = manifest.DisplayName(r.Method) + strings.TrimPrefix(r.Config(), r.Method)
			keys[i] = trainKey(g, r)
		}
	}
	t.Columns = append(t.Columns, table.StringCol("display", display), table.StringCol("run_key", keys))
	for _, path := range paths {
		name := strings.ReplaceAll(path, ".", "_")
		if t.Col(name) != nil {
			continue
		}
		vals := make([]string, rows)
		numeric := true
		for i, l := range label.String {
			if r := runs[l]; r != nil {
				for _, a := range r.Vary {
					if a.Path == path {
						vals[i] = a.Value
					}
				}
			}
			if _, err := strconv.ParseFloat(vals[i], 64); err != nil {
				numeric = false
			}
		}
		if !numeric {
			t.Columns = append(t.Columns, table.StringCol(name, vals))
			continue
		}
		fs := make([]float64, rows)
		for i, v := range vals {
			fs[i], _ = strconv.ParseFloat(v, 64)
		}
		t.Columns = append(t.Columns, table.Float64Col(name, fs))
	}
	return true
}

// trainKey is the short key of run r's train stage in g ("" when g has none): the run's key,
// the same on every table of the run.
func trainKey(g *pipeline.Graph, r *manifest.Run) string {
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindTrain && n.Run == r {
			return n.Key.String()[:12]
		}
	}
	return ""
}

// exportTensors writes every cached tensor output of g's stages (global, model/NNNNN,
// personal/NNNNN, mask/NNNNN, aux/…) as <folder>/<output>.safetensors in the stage's folder
// (stageFolders; the output's "/" as "-"), masks as float32 0/1 tensors of the masked tensor's name and shape, for PyTorch
// (safetensors.torch.load_file) and NumPy. It returns how many files it wrote.
func exportTensors(g *pipeline.Graph, store *artifacts.Store, out string) (int, error) {
	files := 0
	folders := stageFolders(g)
	for _, n := range g.Nodes {
		a, ok, err := store.GetAction(artifacts.Digest(n.Key))
		if err != nil || !ok {
			if err != nil {
				return files, err
			}
			continue
		}
		dir := filepath.Join(out, folders[n.Name])
		for name, d := range a.Outputs {
			if !results.TensorOutput(name) {
				continue
			}
			b, err := store.Get(d)
			if err != nil {
				return files, err
			}
			bundle, err := tensor.DecodeBundle(b)
			if err != nil {
				return files, fmt.Errorf("%s output %s: %w", n.Name, name, err)
			}
			l := append(tensor.List{}, bundle.Tensors...)
			for _, m := range bundle.Masks {
				l = append(l, m.Tensor())
			}
			var buf bytes.Buffer
			if err := safetensors.Encode(&buf, l); err != nil {
				return files, fmt.Errorf("%s output %s: %w", n.Name, name, err)
			}
			if err := writeFile(filepath.Join(dir, strings.ReplaceAll(name, "/", "-")+".safetensors"), buf.Bytes()); err != nil {
				return files, err
			}
			files++
		}
	}
	return files, nil
}
