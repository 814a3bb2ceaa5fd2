package pipeline

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
)

// Live returns the blobs a garbage collection must keep: the outputs of the kept actions,
// every ref's target, and for checkpoint refs the blobs their index lists.
func Live(store *artifacts.Store, keep map[artifacts.Digest]bool) (map[artifacts.Digest]bool, error) {
	live := map[artifacts.Digest]bool{}
	actions, err := store.Actions()
	if err != nil {
		return nil, err
	}
	for key, a := range actions {
		if keep[key] {
			for _, d := range a.Outputs {
				live[d] = true
			}
		}
	}
	refs, err := store.Refs()
	if err != nil {
		return nil, err
	}
	for name, d := range refs {
		live[d] = true
		if strings.HasPrefix(name, checkpointPrefix) {
			if b, err := store.Get(d); err == nil {
				var idx checkpointIndex
				if json.Unmarshal(b, &idx) == nil {
					for _, o := range idx.Outputs {
						live[o] = true
					}
				}
			}
		}
	}
	return live, nil
}

// KeepSet returns the action keys to keep: every stage of the given graphs, and every
// action recorded less than recent ago.
func KeepSet(store *artifacts.Store, graphs []*Graph, recent time.Duration) (map[artifacts.Digest]bool, error) {
	keep := map[artifacts.Digest]bool{}
	for _, g := range graphs {
		for _, n := range g.Nodes {
			keep[artifacts.Digest(n.Key)] = true
		}
	}
	if recent > 0 {
		actions, err := store.Actions()
		if err != nil {
			return nil, err
		}
		for key, a := range actions {
			if t, err := time.Parse(time.RFC3339, a.Meta["created"]); err == nil && time.Since(t) < recent {
				keep[key] = true
			}
		}
	}
	return keep, nil
}
