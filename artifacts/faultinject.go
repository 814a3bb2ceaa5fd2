package artifacts

import (
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// FlipByte is a fault-injection tool for tests, never for production use: it
// opens the (closed) store in dir, inverts every bit of byte offset of blob d
// where it is physically stored (inside the chunk that holds that offset, or
// inside the inline record) and closes the store again, bypassing all digest
// checks. Afterwards Get(d), and Get of every other blob sharing that chunk,
// returns ErrNotFound until a Put of any content containing the chunk repairs
// it. It fails if d is not stored or offset is outside [0, size of d).
func FlipByte(dir string, d Digest, offset int) error {
	s, err := Open(dir, Options{})
	if err != nil {
		return err
	}
	err = s.flipByte(d, offset)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Store) flipByte(d Digest, offset int) error {
	return s.update(func(txn *badger.Txn) error {
		item, err := txn.Get(blobKey(d))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("artifacts: FlipByte: %w: blob %s", ErrNotFound, d)
		}
		if err != nil {
			return err
		}
		raw, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		rec, err := decodeRecord(raw)
		if err != nil {
			return fmt.Errorf("artifacts: FlipByte: blob %s: %v", d, err)
		}
		if offset < 0 || offset >= rec.size {
			return fmt.Errorf("artifacts: FlipByte: offset %d outside blob %s of %d bytes", offset, d, rec.size)
		}
		if rec.chunks == nil {
			raw[1+offset] ^= 0xff
			return txn.Set(blobKey(d), raw)
		}
		for _, c := range rec.chunks {
			if offset >= c.size {
				offset -= c.size
				continue
			}
			item, err := txn.Get(chunkKey(c.d))
			if err != nil {
				return fmt.Errorf("artifacts: FlipByte: chunk %s: %w", c.d, err)
			}
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			if offset >= len(v) {
				return fmt.Errorf("artifacts: FlipByte: chunk %s is already short", c.d)
			}
			v[offset] ^= 0xff
			return txn.Set(chunkKey(c.d), v)
		}
		panic("unreachable: offset checked against record size")
	})
}
