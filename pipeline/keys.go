package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// KeyScheme versions the way stage keys are computed. Changing the key layout or the
// canonical encoding must change it, so that no old cache entry is ever read as new.
const KeyScheme = "fedpipe-key/1"

// CodeVersions holds one constant per stage kind. Bump a kind's number whenever a change
// to its code changes its outputs: every cached result of that kind is then stale.
var CodeVersions = map[string]int{
	KindPartition: 1,
	KindTrain:     3,
	KindEvaluate:  3,
	KindReport:    4,
	KindShift:     3,
}

// Stage kinds.
const (
	KindPartition = "partition"
	KindTrain     = "train"
	KindEvaluate  = "evaluate"
	KindReport    = "report"
	KindShift     = "shift"
)

// Key is a stage key: the SHA-256 of the stage's canonical description.
type Key [32]byte

func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Short is the first 12 hex digits, for display.
func (k Key) Short() string { return k.String()[:12] }

// descriptor is everything a stage's outputs depend on. Its canonical JSON is hashed into
// the key and kept in the store so that a later plan can say what changed.
type descriptor struct {
	Scheme  string          `json:"scheme"`
	Kind    string          `json:"kind"`
	Code    int             `json:"code"`
	Params  json.RawMessage `json:"params"`
	Inputs  []string        `json:"inputs"`
	Backend string          `json:"backend,omitempty"`
}

// canonicalJSON encodes v with sorted object keys and shortest round-trip numbers, so
// that equal values always give equal bytes (1e-3 and 0.001 decode to the same float64
// and encode the same).
func canonicalJSON(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	// Round-trip through a generic value: maps re-encode with sorted keys, numbers as
	// float64 in their shortest form.
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, err
	}
	return json.Marshal(g)
}

// computeKey derives a stage key and the descriptor bytes it hashes.
func computeKey(kind string, params any, inputs []Key, backend string) (Key, []byte, error) {
	code, ok := CodeVersions[kind]
	if !ok {
		return Key{}, nil, fmt.Errorf("pipeline: no code version for stage kind %q", kind)
	}
	p, err := canonicalJSON(params)
	if err != nil {
		return Key{}, nil, err
	}
	d := descriptor{Scheme: KeyScheme, Kind: kind, Code: code, Params: p, Backend: backend, Inputs: []string{}}
	for _, in := range inputs {
		d.Inputs = append(d.Inputs, in.String())
	}
	b, err := json.Marshal(d)
	if err != nil {
		return Key{}, nil, err
	}
	return Key(sha256.Sum256(b)), b, nil
}

// diffDescriptors explains how a stage's current description differs from the one it had
// when it last ran, as "field: old → new" phrases.
func diffDescriptors(old, cur []byte) []string {
	var a, b map[string]any
	if json.Unmarshal(old, &a) != nil || json.Unmarshal(cur, &b) != nil {
		return nil
	}
	var out []string
	diffValue("", a, b, &out)
	return out
}

func diffValue(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			// The params object is the interesting part: name its fields directly.
			if path == "" && k == "params" {
				p = ""
			}
			diffValue(p, am[k], bm[k], out)
		}
		return
	}
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	if string(aj) == string(bj) {
		return
	}
	switch path {
	case "inputs":
		*out = append(*out, "an input stage changed")
	case "code":
		*out = append(*out, fmt.Sprintf("stage code version %s → %s", aj, bj))
	default:
		if a == nil {
			aj = []byte("unset")
		}
		if b == nil {
			bj = []byte("unset")
		}
		*out = append(*out, fmt.Sprintf("%s %s → %s", path, aj, bj))
	}
}
