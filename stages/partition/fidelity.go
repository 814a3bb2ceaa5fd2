package partition

import (
	"fmt"

	"github.com/fedpipe/fedpipe/stages/rng"
)

// MaxShardDraws bounds the redraws of ClassShards until no client holds one class twice.
const MaxShardDraws = 10000

// ClassShards deals class-pure shards as FedSelect's official code does: each class's
// samples (in label order, positions ascending) are cut into clients·shards/classes equal
// shards, so every class is used equally often; the list of shard labels (each class
// repeated that many times) is shuffled and client c takes the shards of entries
// [c·shards, (c+1)·shards), each shard its first perShard samples (0: all of it).
// distinct redraws the shuffle until no client holds one class twice (the paper's s
// classes per client); without it a client may, as in the official code. Returns each
// client's sample positions and its shard labels; the labels drive ClassTest.
func ClassShards(labels []int32, classes, clients, shards, perShard int, distinct bool, seed int64) ([][]int, [][]int32, error) {
	if clients*shards%classes != 0 {
		return nil, nil, fmt.Errorf("class-pure shards: %d clients × %d shards is not a multiple of the %d classes, so classes cannot be used equally often", clients, shards, classes)
	}
	perClass := clients * shards / classes
	if distinct && shards > classes {
		return nil, nil, fmt.Errorf("class-pure shards: %d distinct classes per client, but the data have %d", shards, classes)
	}
	byClass := classPositions(labels, classes)
	pieces := make([][][]int, classes)
	for cls, idx := range byClass {
		size := len(idx) / perClass
		if size == 0 || (perShard > 0 && perShard > size) {
			return nil, nil, fmt.Errorf("class-pure shards: class %d has %d samples, too few for %d shards of %d", cls, len(idx), perClass, max(perShard, 1))
		}
		for k := 0; k < perClass; k++ {
			sh := idx[k*size : (k+1)*size]
			if perShard > 0 {
				sh = sh[:perShard]
			}
			pieces[cls] = append(pieces[cls], sh)
		}
	}
	draw, err := shardLabels(classes, clients, shards, perClass, distinct, seed)
	if err != nil {
		return nil, nil, err
	}
	out := make([][]int, clients)
	used := make([]int, classes)
	for c := range out {
		for _, cls := range draw[c] {
			out[c] = append(out[c], pieces[cls][used[cls]]...)
			used[cls]++
		}
	}
	return out, draw, nil
}

// shardLabels draws each client's shard labels: every class perClass times, shuffled.
func shardLabels(classes, clients, shards, perClass int, distinct bool, seed int64) ([][]int32, error) {
	for attempt := 0; attempt < MaxShardDraws; attempt++ {
		r := rng.New(seed, attempt, rng.Global, "partition/class-shards")
		list := make([]int32, 0, classes*perClass)
		for k := 0; k < perClass; k++ {
			for cls := 0; cls < classes; cls++ {
				list = append(list, int32(cls))
			}
		}
		r.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		out := make([][]int32, clients)
		ok := true
		for c := range out {
			out[c] = list[c*shards : (c+1)*shards]
			if distinct {
				seen := map[int32]bool{}
				for _, cls := range out[c] {
					ok = ok && !seen[cls]
					seen[cls] = true
				}
			}
		}
		if ok {
			return out, nil
		}
	}
	return nil, fmt.Errorf("class-pure shards: no draw in %d gave every client %d distinct classes", MaxShardDraws, shards)
}

// OfficialCut picks a client's samples as FedSelect's official noniid does
// (utils/sampling.py): joined is the client's shards in the order drawn (n samples, shards
// of them), cut into slices [k, k+size) at k = 0, n/shards+1, 2(n/shards+1), … below n.
// size 0 stands for the code's default size of −1: Python's slice [0:−1] keeps all but the
// last sample and the later slices [k:k−1] are empty, so a client's 100 official test
// samples become 99.
func OfficialCut(joined []int, shards, size int) []int {
	n := len(joined)
	step := n/shards + 1
	var out []int
	for k := 0; k < n; k += step {
		end := min(k+size, n)
		if size == 0 {
			end = k - 1
			if k == 0 {
				end = n - 1
			}
		}
		if end > k {
			out = append(out, joined[k:end]...)
		}
	}
	return out
}

// ClassTest draws each client's test set from test samples (labels of the official test
// split) the way ClassShards dealt its training shards: each class's test samples are cut
// into as many equal shares as the class has shards, and client c takes one share per
// shard label, each its first perShard samples (0: the whole share), in the order drawn.
func ClassTest(labels []int32, classes int, draw [][]int32, perShard int) ([][]int, error) {
	count := make([]int, classes)
	for _, d := range draw {
		for _, cls := range d {
			count[cls]++
		}
	}
	byClass := classPositions(labels, classes)
	used := make([]int, classes)
	out := make([][]int, len(draw))
	for c, d := range draw {
		for _, cls := range d {
			size := len(byClass[cls]) / count[cls]
			if size == 0 || perShard > size {
				return nil, fmt.Errorf("official test split: class %d has %d test samples, too few for %d clients' shares of %d", cls, len(byClass[cls]), count[cls], max(perShard, 1))
			}
			take := size
			if perShard > 0 {
				take = perShard
			}
			start := used[cls] * size
			out[c] = append(out[c], byClass[cls][start:start+take]...)
			used[cls]++
		}
	}
	return out, nil
}

func classPositions(labels []int32, classes int) [][]int {
	byClass := make([][]int, classes)
	for i, y := range labels {
		byClass[y] = append(byClass[y], i)
	}
	return byClass
}

// PathologicalRandom is Pathological as DM-PFL's appendix describes it: each client draws
// classesPerClient distinct classes at random (McMahan-style random shards, not the
// cyclic pairs of Pathological), and with quantity skew q > 0 and uniform set, each
// client's share of its group's half of the data is drawn uniformly (U(0,1), scaled so
// the group holds half) instead of equal. Each class's shuffled samples are cut among its
// holders in proportion to their weights; classes no client holds are left out.
func PathologicalRandom(labels []int32, classes, clients, classesPerClient int, skew float64, randomClasses, uniform bool, seed int64) ([][]int, error) {
	if classesPerClient > classes {
		return nil, fmt.Errorf("classes_per_client %d exceeds the %d classes", classesPerClient, classes)
	}
	r := rng.New(seed, rng.Global, rng.Global, "partition/pathological-random")
	holders := make([][]int, classes)
	order := r.Perm(classes)
	for c := 0; c < clients; c++ {
		pick := order
		if randomClasses {
			pick = r.Perm(classes)[:classesPerClient]
		}
		for k := 0; k < classesPerClient; k++ {
			cls := pick[k]
			if !randomClasses {
				cls = order[(c*classesPerClient+k)%classes]
			}
			holders[cls] = append(holders[cls], c)
		}
	}
	weight := make([]float64, clients)
	for c := range weight {
		weight[c] = 1
		if uniform {
			weight[c] = r.Float64()
		}
	}
	if err := quantitySkew(weight, skew, r); err != nil {
		return nil, err
	}
	return cutAmongHolders(classPositions(labels, classes), holders, weight, clients, r), nil
}
