package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	badger "github.com/dgraph-io/badger/v4"
)

// An Action is an action-cache entry: what running one stage produced.
type Action struct {
	// Outputs maps each output's name (non-empty) to the digest of its blob.
	Outputs map[string]Digest
	// Meta is free-form description (e.g. "seconds", "created", "name"). It
	// is not part of the action's identity and is never verified.
	Meta map[string]string
}

// Binding is the digest that ties an action's outputs to its key, hex: SHA-256 over a
// version line, the key and each output's name and digest in name order. A remote entry
// records it, so that an entry copied to another key, or whose outputs were pointed at
// other blobs, is told from the entry of its key.
func Binding(key Digest, outputs map[string]Digest) string {
	h := sha256.New()
	fmt.Fprintf(h, "fedpipe-binding/1\n%s\n", key)
	for _, name := range sortedNames(outputs) {
		fmt.Fprintf(h, "%s\x00%s\n", name, outputs[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// actionRecord is the stored form of an Action: JSON, whose encoder sorts map
// keys, so equal Actions encode to equal bytes.
type actionRecord struct {
	V       int               `json:"v"`
	Outputs map[string]Digest `json:"outputs"`
	Meta    map[string]string `json:"meta,omitempty"`
}

const actionVersion = 1

func actionKey(k Digest) []byte { return append([]byte(prefixAction), k[:]...) }

// encodeAction returns the deterministic encoding of a.
func encodeAction(a Action) ([]byte, error) {
	out := a.Outputs
	if out == nil {
		out = map[string]Digest{}
	}
	return json.Marshal(actionRecord{V: actionVersion, Outputs: out, Meta: a.Meta})
}

// PutAction records a under key, replacing any previous entry.
//
// The caller must have stored every output first; PutAction checks with Has
// and returns an error wrapping ErrNotFound, naming the output, if one is
// absent. Output names must be non-empty.
func (s *Store) PutAction(key Digest, a Action) error {
	for _, name := range sortedNames(a.Outputs) {
		d := a.Outputs[name]
		if name == "" {
			return fmt.Errorf("artifacts: put action %s: output with empty name", key.Short())
		}
		ok, err := s.Has(d)
		if err != nil {
			return fmt.Errorf("artifacts: put action %s: %w", key.Short(), err)
		}
		if !ok {
			return fmt.Errorf("artifacts: put action %s: output %q (blob %s) is not in the store; Put outputs before recording the action: %w", key.Short(), name, d, ErrNotFound)
		}
	}
	rec, err := encodeAction(a)
	if err != nil {
		return fmt.Errorf("artifacts: put action %s: %w", key.Short(), err)
	}
	if err := s.update(func(txn *badger.Txn) error { return txn.Set(actionKey(key), rec) }); err != nil {
		return fmt.Errorf("artifacts: put action %s: %w", key.Short(), err)
	}
	return nil
}

// GetAction returns the action recorded under key.
//
// ok is true only if the record exists, decodes, and every output blob is
// present and verifies (each is read and re-hashed in full, as Get does). In
// every other case ok is false and err is nil, and the reason is reported
// through Options.Logf unless the record was simply absent. err is non-nil
// only for I/O failures of the store itself.
func (s *Store) GetAction(key Digest) (a Action, ok bool, err error) {
	rec, found, readable, err := s.readAction(key)
	if err != nil || !found {
		return Action{}, false, err
	}
	if !readable || rec.Outputs == nil {
		s.logf("artifacts: action %s has an unreadable record; treating it as a miss", key)
		return Action{}, false, nil
	}
	for _, name := range sortedNames(rec.Outputs) {
		d := rec.Outputs[name]
		if err := s.Verify(d); err != nil {
			if errors.Is(err, ErrNotFound) {
				s.logf("artifacts: action %s: output %q (blob %s) is missing or corrupt; treating the action as a miss", key, name, d)
				return Action{}, false, nil
			}
			return Action{}, false, fmt.Errorf("artifacts: get action %s: %w", key.Short(), err)
		}
	}
	return Action{Outputs: rec.Outputs, Meta: rec.Meta}, true, nil
}

// ActionMeta returns the meta of the action recorded under key without reading its
// outputs (GetAction reads and re-hashes every one): for describing a result (its
// provenance), never for using it. ok is false when no readable record exists.
func (s *Store) ActionMeta(key Digest) (meta map[string]string, ok bool, err error) {
	rec, found, readable, err := s.readAction(key)
	if err != nil || !found || !readable {
		return nil, false, err
	}
	return rec.Meta, true, nil
}

// readAction reads and decodes the record under key: found is false when there is none,
// readable false when it does not decode as this version's record; err is an I/O failure.
func (s *Store) readAction(key Digest) (rec actionRecord, found, readable bool, err error) {
	var raw []byte
	err = s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(actionKey(key))
		if err != nil {
			return err
		}
		raw, err = item.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return rec, false, false, nil
	}
	if err != nil {
		return rec, false, false, fmt.Errorf("artifacts: get action %s: %w", key.Short(), err)
	}
	if err := json.Unmarshal(raw, &rec); err != nil || rec.V != actionVersion {
		return actionRecord{}, true, false, nil
	}
	return rec, true, true, nil
}

func sortedNames(m map[string]Digest) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
