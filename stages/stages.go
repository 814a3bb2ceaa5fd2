package stages

import (
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/train"

	// Every method registers itself (train.Register) when its package is linked.
	_ "github.com/fedpipe/fedpipe/stages/train/methods"
)

// Env is what the stage implementations share within one invocation.
type Env struct {
	Loader *data.Loader
	// Backend is the resolved GoMLX backend name.
	Backend string
	// Hub, when set, trains the clients of the train stages running at the same time in
	// lockstep (train.Hub); nil: each run on its own, in lockstep on XLA.
	Hub *train.Hub
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

// assignment reads the stage's partition input.
func (env *Env) assignment(sc Context) (*partition.Assignment, error) {
	b, err := sc.Input(manifest.KindPartition, results.OutPartitionAssignment)
	if err != nil {
		return nil, err
	}
	return partition.Decode(b)
}

// final is what the stages after training need: the data, the partition, the run's
// method, a compiled model and each client's final model.
type final struct {
	ds     *data.Dataset
	assign *partition.Assignment
	method train.Method
	model  *model.Model
	models []tensor.List
	// global is the global model of methods that infer with it beside the personal ones
	// (train.NeedsGlobal); nil otherwise.
	global tensor.List
}

// loadFinal reads a post-training stage's inputs (its train stage and partition). The caller
// closes the model.
func (env *Env) loadFinal(sc Context) (*final, error) {
	ds, err := env.dataset(sc)
	if err != nil {
		return nil, err
	}
	a, err := env.assignment(sc)
	if err != nil {
		return nil, err
	}
	models, err := finalModels(sc, a.Clients())
	if err != nil {
		return nil, err
	}
	var global tensor.List
	if train.NeedsGlobal(sc.Run()) {
		b, err := sc.Input(manifest.KindTrain, results.OutTrainEvalGlobal)
		if err != nil {
			return nil, err
		}
		if global, err = tensor.Decode(b); err != nil {
			return nil, err
		}
	}
	method, err := train.NewRunMethod(sc.Run())
	if err != nil {
		return nil, err
	}
	model, err := model.NewModel(env.Backend, train.ModelSpec(sc.Run(), ds))
	if err != nil {
		return nil, err
	}
	return &final{ds: ds, assign: a, method: method, model: model, models: models, global: global}, nil
}

// finalModels reads the model each client is evaluated with from the stage's train input.
func finalModels(sc Context, clients int) ([]tensor.List, error) {
	personal := train.PersonalModels(sc.Run())
	models := make([]tensor.List, clients)
	for c := range models {
		if c > 0 && !personal {
			models[c] = models[0]
			continue
		}
		name := results.OutTrainGlobal
		if personal {
			name = results.ClientOutput(results.ClientModel, c)
		}
		b, err := sc.Input(manifest.KindTrain, name)
		if err != nil {
			return nil, err
		}
		if models[c], err = tensor.Decode(b); err != nil {
			return nil, err
		}
	}
	return models, nil
}
