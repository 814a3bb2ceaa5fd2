package shift

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/rng"
)

// CIFAR10CIndices maps client c's test samples to images of a CIFAR-10-C severity block,
// for evaluation under the real CIFAR-10-C corruptions (shift.cifar10c).
//
// CIFAR-10-C corrupts only CIFAR-10's official test split (10,000 images, in
// test_batch.bin's order), while fedpipe pools the official train and test images before
// partitioning (FL-bench style), so most of a client's test samples have no CIFAR-10-C
// version. The rule, so that each client keeps its own test set where it can and its label
// distribution everywhere:
//
//   - a sample from the official test split (pooled index i ≥ testStart) is replaced by its
//     own CIFAR-10-C version, block index i − testStart ("own");
//   - any other sample is replaced by a CIFAR-10-C image of the same class ("drawn"):
//     per class, in class order, a permutation of the block's images of that class that
//     are not this client's own counterparts (all of them when that leaves none) is drawn
//     from the stream (seed, client, "shift/cifar10c") and taken in order, cycling when the
//     client needs more than it holds.
//
// The draw does not depend on the corruption or the severity: every corruption and
// severity is evaluated on the same underlying images, as CIFAR-10-C itself corrupts the
// same 10,000 images at every severity, so accuracy across severities is a paired
// comparison. labels are the pooled dataset's labels, blockLabels those of one severity
// block (block image j corrupts test image j, so blockLabels[j] = labels[testStart+j]).
// It returns the block index of each test sample, in order, and how many were own.
func CIFAR10CIndices(test []int, labels []int32, testStart int, blockLabels []int32, seed int64, client int) (idx []int, own int, err error) {
	n := len(blockLabels)
	idx = make([]int, len(test))
	used := map[int]bool{}
	need := map[int32][]int{} // class → positions in test needing a drawn image
	for p, i := range test {
		if j := i - testStart; i >= testStart && j < n {
			idx[p] = j
			used[j] = true
			own++
			continue
		}
		need[labels[i]] = append(need[labels[i]], p)
	}
	if len(need) == 0 {
		return idx, own, nil
	}
	byClass := map[int32][]int{}
	for j, l := range blockLabels {
		byClass[l] = append(byClass[l], j)
	}
	r := rng.New(seed, rng.Global, client, "shift/cifar10c")
	for _, k := range slices.Sorted(maps.Keys(need)) {
		pos := need[k]
		var cand []int
		for _, j := range byClass[k] {
			if !used[j] {
				cand = append(cand, j)
			}
		}
		if len(cand) == 0 {
			cand = byClass[k]
		}
		if len(cand) == 0 {
			return nil, 0, fmt.Errorf("CIFAR-10-C holds no image of class %d to stand in for client %d's test samples of that class: %w", k, client, manifest.ErrInvalid)
		}
		perm := r.Perm(len(cand))
		for q, p := range pos {
			idx[p] = cand[perm[q%len(cand)]]
		}
	}
	return idx, own, nil
}
