package stages

import (
	"context"

	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/partition"
)

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
	return Outputs{results.OutPartitionAssignment: b}, nil
}
