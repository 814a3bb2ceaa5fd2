package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
)

// Extending a run: a train stage that differs from a cached one only by a larger
// train.rounds can continue from the cached result (its outputs are the training state
// after its last round) instead of starting from round 0. The cached results of a train
// stage are indexed by its extension key — its descriptor with train.rounds left out —
// under the ref "extend/<extension key>", a JSON object rounds → stage key. Whether a
// method's first R rounds are the same whatever the total is for the stage to decide
// (LoadExtension is only an offer).

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

func extensionRef(ek string) string { return "extend/" + ek }

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
	ek, ok := extensionKey(sc.Node)
	if !ok {
		return 0, nil, false
	}
	own, _ := trainRounds(sc.Node)
	idx := readExtensions(sc.store, ek)
	var cands []int
	for r := range idx {
		if n, err := strconv.Atoi(r); err == nil && n < own {
			cands = append(cands, n)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(cands)))
	for _, r := range cands {
		var key artifacts.Digest
		b, err := hex.DecodeString(idx[strconv.Itoa(r)])
		if err != nil || len(b) != len(key) {
			continue
		}
		copy(key[:], b)
		a, found, err := sc.store.GetAction(key)
		if err != nil || !found {
			continue
		}
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
			return r, blobs, true
		}
	}
	return 0, nil, false
}
