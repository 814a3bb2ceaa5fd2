package artifacts

import (
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// MaxRefName is the longest ref name PutRef accepts, in bytes.
const MaxRefName = 1024

func refKey(name string) []byte { return append([]byte(prefixRef), name...) }

func checkRefName(name string) error {
	if name == "" || len(name) > MaxRefName {
		return fmt.Errorf("artifacts: ref name must be 1 to %d bytes, have %d", MaxRefName, len(name))
	}
	return nil
}

// PutRef points the ref name at blob d, replacing any previous value. Refs
// are mutable, not content-addressed: they hold resumable state such as "the
// latest checkpoint of stage K". Like PutAction, PutRef refuses (with an
// error wrapping ErrNotFound) a digest that has no blob in the store; the
// blob may still be found corrupt later, so readers Get it and treat
// ErrNotFound as "no usable state".
func (s *Store) PutRef(name string, d Digest) error {
	if err := checkRefName(name); err != nil {
		return err
	}
	ok, err := s.Has(d)
	if err != nil {
		return fmt.Errorf("artifacts: put ref %q: %w", name, err)
	}
	if !ok {
		return fmt.Errorf("artifacts: put ref %q: blob %s is not in the store; Put it first: %w", name, d, ErrNotFound)
	}
	if err := s.update(func(txn *badger.Txn) error { return txn.Set(refKey(name), d[:]) }); err != nil {
		return fmt.Errorf("artifacts: put ref %q: %w", name, err)
	}
	return nil
}

// GetRef returns the digest the ref name points at. ok is false if the ref
// is unset (or its stored value is malformed, which is logged).
func (s *Store) GetRef(name string) (d Digest, ok bool, err error) {
	if err := checkRefName(name); err != nil {
		return Digest{}, false, err
	}
	bad := false
	err = s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(refKey(name))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if len(v) != len(d) {
				bad = true
				return nil
			}
			copy(d[:], v)
			return nil
		})
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return Digest{}, false, nil
	}
	if err != nil {
		return Digest{}, false, fmt.Errorf("artifacts: get ref %q: %w", name, err)
	}
	if bad {
		s.logf("artifacts: ref %q has a malformed value; treating it as unset", name)
		return Digest{}, false, nil
	}
	return d, true, nil
}

// DeleteRef removes the ref name. Deleting an unset ref is not an error.
func (s *Store) DeleteRef(name string) error {
	if err := checkRefName(name); err != nil {
		return err
	}
	if err := s.update(func(txn *badger.Txn) error { return txn.Delete(refKey(name)) }); err != nil {
		return fmt.Errorf("artifacts: delete ref %q: %w", name, err)
	}
	return nil
}
