package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/manifest"
)

// Extending a run: a train stage that differs from a cached one only by a larger
// train.rounds can continue from the cached result (its outputs are the training state
// after its last round) instead of starting from round 0. The cached results of a train
// stage are indexed by its extension key — its descriptor with train.rounds left out —
// under the ref "extend/<extension key>", a JSON object rounds → stage key. Only methods
// whose first R rounds do not depend on the total (manifest.Extendable) are offered one.

// extensionKey is the key of a train node's descriptor without train.rounds; ok is false
// for other kinds.
func extensionKey(n *Node) (string, bool) {
	if n.Kind != manifest.KindTrain || len(n.desc) == 0 {
		return "", false
	}
	var d map[string]any
	if json.Unmarshal(n.desc, &d) != nil {
		return "", false
	}
	p, _ := d["params"].(map[string]any)
	t, _ := p["train"].(map[string]any)
	if t == nil {
		return "", false
	}
	delete(t, "rounds")
	d["kind"] = "train-extension"
	b, err := json.Marshal(d)
	if err != nil {
		return "", false
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), true
}

// trainRounds is a train node's train.rounds.
func trainRounds(n *Node) (int, bool) {
	if n.Run == nil {
		return 0, false
	}
	return n.Run.Train.Rounds, true
}

// readExtensions reads the rounds → stage key index of an extension key.
func readExtensions(store *artifacts.Store, ek string) map[string]string {
	idx := map[string]string{}
	d, ok, err := store.GetRef(extensionRef(ek))
	if err != nil || !ok {
		return idx
	}
	if b, err := store.Get(d); err == nil {
		_ = json.Unmarshal(b, &idx)
	}
	return idx
}

// recordExtension indexes a train node's just-stored result by its extension key.
func recordExtension(store *artifacts.Store, n *Node) error {
	ek, ok := extensionKey(n)
	if !ok {
		return nil
	}
	rounds, ok := trainRounds(n)
	if !ok {
		return nil
	}
	idx := readExtensions(store, ek)
	idx[strconv.Itoa(rounds)] = n.Key.String()
	b, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	d, err := store.Put(b)
	if err != nil {
		return err
	}
	return store.PutRef(extensionRef(ek), d)
}

// LoadExtension returns the outputs of the cached result of this train stage with the
// most rounds fewer than its own, everything else equal (see above), if one is in the
// store and all its blobs verify; rounds is that result's train.rounds.
func (sc *StageContext) LoadExtension() (rounds int, blobs map[string][]byte, ok bool) {
	for _, c := range extensions(sc.store, sc.Node) {
		a, found, err := sc.store.GetAction(c.key)
		if err != nil || !found || remote.Partial(a) {
			continue // a partial result has no state to continue from
		}
		r := c.rounds
		blobs = map[string][]byte{}
		for name, d := range a.Outputs {
			v, err := sc.store.Get(d)
			if err != nil {
				blobs = nil
				break
			}
			blobs[name] = v
		}
		if blobs != nil {
			p, _ := ProvenanceOf(a)
			sc.resumable(r, segmentsOf(p, r))
			sc.extendedFrom = r
			return r, blobs, true
		}
	}
	return 0, nil, false
}

// extension is a cached shorter run a train node may continue from.
type extension struct {
	rounds int
	key    artifacts.Digest
}

// extensions lists the shorter runs of n indexed in the store, longest first; none when
// n's method cannot extend.
func extensions(store *artifacts.Store, n *Node) []extension {
	ek, ok := extensionKey(n)
	if !ok || !manifest.Extendable(n.Run) {
		return nil
	}
	own, _ := trainRounds(n)
	idx := readExtensions(store, ek)
	var out []extension
	for r, k := range idx {
		rounds, err := strconv.Atoi(r)
		b, herr := hex.DecodeString(k)
		var key artifacts.Digest
		if err != nil || herr != nil || len(b) != len(key) || rounds >= own || !manifest.ExtendableFrom(n.Run, rounds) {
			continue
		}
		copy(key[:], b)
		out = append(out, extension{rounds, key})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rounds > out[j].rounds })
	return out
}

// extensionRounds is the train.rounds of the cached shorter run a train stage would
// continue from (0: none).
func extensionRounds(store *artifacts.Store, n *Node) int {
	for _, c := range extensions(store, n) {
		if a, found, err := store.GetAction(c.key); err == nil && found && !remote.Partial(a) {
			return c.rounds
		}
	}
	return 0
}

// EarlierRun is a cached shorter run of a train stage, one a longer run may continue
// from: its train.rounds and its stage key.
type EarlierRun struct {
	Rounds int
	Key    artifacts.Digest
}

// EarlierRuns lists the cached shorter runs train node n may continue from, longest first
// (none when its method cannot extend): what status --watch and serve take an extended
// run's earlier rounds from.
func EarlierRuns(store *artifacts.Store, n *Node) []EarlierRun {
	var out []EarlierRun
	for _, e := range extensions(store, n) {
		out = append(out, EarlierRun{Rounds: e.rounds, Key: e.key})
	}
	return out
}
