package partition

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/stages/rng/numpy"
)

// DirichletFLBench deals samples and splits each client's into train and test exactly as
// FL-bench does (the FedOBP authors' fork, uglyghost+FedOBP b55d0fa), with numpy's global
// generator seeded once with seed (generate_data.py:39, src/utils/tools.py:28) and drawn in
// FL-bench's order (partition.draw: flbench):
//
//   - each class, in increasing label order, shuffles its sample positions in place (the
//     shuffled order carries over to a redraw), draws p ~ Dir(α·1_N) and is cut at
//     int(cumsum(p)·n), client j taking the j-th piece (data/utils/schemes/dirichlet.py:41-59,
//     no balance cap); all of it is redrawn until every client holds minSamples samples
//     (:36, :62);
//   - then each client in order shuffles its positions and keeps the first
//     int(n·testFraction) for test, the rest for training (generate_data.py:225-235).
//
// labels are the pooled samples' labels in FL-bench's order (for FMNIST: the 60,000
// training images, then the 10,000 test images). Returns positions into labels.
func DirichletFLBench(labels []int32, classes, clients int, alpha float64, minSamples int, testFraction float64, seed int64) (train, test [][]int, err error) {
	if seed < 0 || seed > math.MaxUint32 {
		return nil, nil, fmt.Errorf("partition seed %d: numpy seeds lie in [0, 2^32)", seed)
	}
	r := numpy.New(uint32(seed))
	byClass := classPositions(labels, classes)
	var out [][]int
	for attempt := 0; ; attempt++ {
		if attempt == MaxDirichletDraws {
			return nil, nil, fmt.Errorf("no Dirichlet(%g) draw in %d gave all %d clients at least %d samples: lower min_samples or clients, or raise alpha",
				alpha, MaxDirichletDraws, clients, minSamples)
		}
		out = make([][]int, clients)
		for _, idx := range byClass {
			r.Shuffle(idx)
			cutCumulative(out, idx, r.Dirichlet(alpha, clients), 1)
		}
		smallest := math.MaxInt
		for _, c := range out {
			smallest = min(smallest, len(c))
		}
		if smallest >= minSamples {
			break
		}
	}
	train, test = make([][]int, clients), make([][]int, clients)
	for c, idx := range out {
		r.Shuffle(idx)
		k := int(float64(len(idx)) * testFraction)
		if k == 0 || k == len(idx) {
			return nil, nil, fmt.Errorf("client %d received %d samples, %d of them for test: every client needs a training and a test sample (raise partition.min_samples)", c, len(idx), k)
		}
		test[c], train[c] = idx[:k], idx[k:]
	}
	return train, test, nil
}
