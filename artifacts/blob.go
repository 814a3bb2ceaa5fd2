package artifacts

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// A blob record (the value under b/<digest>) is one of:
//
//	0x01 data...                      inline: the blob's bytes follow
//	0x02 uvarint(size) uvarint(n)     chunked: the blob's total size, then
//	     n × (digest[32] uvarint(len)) its n ≥ 1 chunks in order
//
// Chunk bytes live under c/<digest of chunk>. A chunked record's sizes add up
// to size; every chunk is non-empty.
const (
	recInline  = 0x01
	recChunked = 0x02
)

// chunkRef names one chunk of a chunked blob.
type chunkRef struct {
	d    Digest
	size int
}

// blobRecord is a decoded blob record: inline != nil xor chunks != nil.
type blobRecord struct {
	inline []byte
	chunks []chunkRef
	size   int
}

func encodeInline(data []byte) []byte {
	return append([]byte{recInline}, data...)
}

func encodeChunked(refs []chunkRef, size int) []byte {
	b := []byte{recChunked}
	b = binary.AppendUvarint(b, uint64(size))
	b = binary.AppendUvarint(b, uint64(len(refs)))
	for _, c := range refs {
		b = append(b, c.d[:]...)
		b = binary.AppendUvarint(b, uint64(c.size))
	}
	return b
}

// decodeRecord parses a blob record. The inline slice aliases b.
func decodeRecord(b []byte) (blobRecord, error) {
	if len(b) == 0 {
		return blobRecord{}, errors.New("empty record")
	}
	switch b[0] {
	case recInline:
		return blobRecord{inline: b[1:], size: len(b) - 1}, nil
	case recChunked:
		b = b[1:]
		size, k := binary.Uvarint(b)
		if k <= 0 || size > 1<<62 {
			return blobRecord{}, errors.New("bad size")
		}
		b = b[k:]
		n, k := binary.Uvarint(b)
		if k <= 0 || n == 0 || n > uint64(len(b)/(len(Digest{})+1)) {
			return blobRecord{}, errors.New("bad chunk count")
		}
		b = b[k:]
		rec := blobRecord{chunks: make([]chunkRef, 0, n), size: int(size)}
		var total uint64
		for range n {
			if len(b) < len(Digest{}) {
				return blobRecord{}, errors.New("truncated chunk list")
			}
			var c chunkRef
			copy(c.d[:], b)
			b = b[len(c.d):]
			sz, k := binary.Uvarint(b)
			if k <= 0 || sz == 0 || sz > MaxChunkSize {
				return blobRecord{}, errors.New("bad chunk size")
			}
			b = b[k:]
			c.size = int(sz)
			total += sz
			rec.chunks = append(rec.chunks, c)
		}
		if len(b) != 0 {
			return blobRecord{}, errors.New("trailing bytes")
		}
		if total != size {
			return blobRecord{}, fmt.Errorf("chunk sizes add to %d, record says %d", total, size)
		}
		return rec, nil
	}
	return blobRecord{}, fmt.Errorf("unknown record type %#x", b[0])
}

func blobKey(d Digest) []byte  { return append([]byte(prefixBlob), d[:]...) }
func chunkKey(d Digest) []byte { return append([]byte(prefixChunk), d[:]...) }

// Put stores data and returns its digest, Sum(data).
//
// Putting content that is already stored and intact writes nothing: Put
// compares what is stored with data (no re-hashing) and rewrites only what
// is missing or differs, so a Put also repairs any corrupt chunk or record it
// covers, including a chunk shared with other blobs. Chunks are written and
// committed before the blob record, so a blob is never visible before all of
// its chunks. Put does not retain data after it returns.
func (s *Store) Put(data []byte) (Digest, error) {
	if err := checkSpace(s.dir, len(data)); err != nil {
		return Digest{}, err
	}
	d := Sum(data)
	defer s.noteMapped(len(data))
	if len(data) <= InlineMax {
		if err := s.setIfDifferent(blobKey(d), encodeInline(data), d); err != nil {
			return Digest{}, fmt.Errorf("artifacts: put blob %s: %w", d.Short(), err)
		}
		return d, nil
	}

	parts := chunks(data)
	refs := make([]chunkRef, len(parts))
	for i, p := range parts {
		refs[i] = chunkRef{d: Sum(p), size: len(p)}
	}

	// Decide which chunks need writing: absent, or present with other bytes.
	var write []int
	seen := make(map[Digest]bool, len(parts))
	err := s.view(func(txn *badger.Txn) error {
		for i, p := range parts {
			cd := refs[i].d
			if seen[cd] {
				continue
			}
			seen[cd] = true
			item, err := txn.Get(chunkKey(cd))
			if errors.Is(err, badger.ErrKeyNotFound) {
				write = append(write, i)
				continue
			}
			if err != nil {
				return err
			}
			same := false
			if err := item.Value(func(v []byte) error { same = bytes.Equal(v, p); return nil }); err != nil {
				return err
			}
			if !same {
				s.logf("artifacts: chunk %s was corrupt; rewriting it", cd)
				write = append(write, i)
			}
		}
		return nil
	})
	if err != nil {
		return Digest{}, fmt.Errorf("artifacts: put blob %s: %w", d.Short(), err)
	}
	if len(write) > 0 {
		wb := s.db.NewWriteBatch()
		for _, i := range write {
			if err := wb.Set(chunkKey(refs[i].d), parts[i]); err != nil {
				wb.Cancel()
				return Digest{}, fmt.Errorf("artifacts: put blob %s: %w", d.Short(), err)
			}
		}
		if err := wb.Flush(); err != nil {
			return Digest{}, fmt.Errorf("artifacts: put blob %s: %w", d.Short(), err)
		}
	}
	if err := s.setIfDifferent(blobKey(d), encodeChunked(refs, len(data)), d); err != nil {
		return Digest{}, fmt.Errorf("artifacts: put blob %s: %w", d.Short(), err)
	}
	return d, nil
}

// setIfDifferent sets key to val unless it already holds exactly val.
func (s *Store) setIfDifferent(key, val []byte, d Digest) error {
	return s.update(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if err == nil {
			same := false
			if err := item.Value(func(v []byte) error { same = bytes.Equal(v, val); return nil }); err != nil {
				return err
			}
			if same {
				return nil
			}
			s.logf("artifacts: blob record %s was corrupt; rewriting it", d)
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		return txn.Set(key, val)
	})
}

// Get returns the blob with digest d.
//
// Every chunk and the whole blob are re-hashed on every call. If the blob is
// missing, or any part of it is missing or does not match its digest, Get
// returns an error wrapping ErrNotFound; the corrupt case is also reported
// through Options.Logf, naming the digest. Get never returns bytes whose
// SHA-256 is not d. The returned slice is the caller's.
func (s *Store) Get(d Digest) ([]byte, error) {
	var out []byte
	err := s.read(d, func(size int) { out = make([]byte, 0, size) }, func(p []byte) { out = append(out, p...) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Verify reports whether the blob with digest d is stored intact, doing all
// the checks Get does without assembling the blob in memory. It returns nil
// or an error wrapping ErrNotFound (or an I/O error).
func (s *Store) Verify(d Digest) error {
	return s.read(d, func(int) {}, func([]byte) {})
}

// Has reports whether a blob record for d exists. It does not read or verify
// the blob's bytes: use Verify or Get for that. A blob found corrupt by Get
// still "exists" until a Put repairs it.
func (s *Store) Has(d Digest) (bool, error) {
	err := s.view(func(txn *badger.Txn) error {
		_, err := txn.Get(blobKey(d))
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("artifacts: has blob %s: %w", d.Short(), err)
	}
	return true, nil
}

// Size returns blob d's size as its record states it, reading neither its chunks nor its
// bytes' digest (Verify does that). A missing blob or an unreadable record is an error
// wrapping ErrNotFound.
func (s *Store) Size(d Digest) (int64, error) {
	var size int64
	err := s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(blobKey(d))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("%w: blob %s", ErrNotFound, d)
		}
		if err != nil {
			return fmt.Errorf("artifacts: size of blob %s: %w", d.Short(), err)
		}
		return item.Value(func(v []byte) error {
			rec, err := decodeRecord(v)
			if err != nil {
				return fmt.Errorf("%w: blob %s has an unreadable record: %v", ErrNotFound, d, err)
			}
			size = int64(rec.size)
			return nil
		})
	})
	return size, err
}

// read streams the verified blob d to sink, after calling start with its
// size. sink's argument is valid only during the call. Nothing reaches sink
// unless the whole blob then verifies; callers discard partial output on error.
// The bytes it reads count toward the release of the store's mapped pages
// (mapped.go), whether they were assembled (Get) or only hashed (Verify).
func (s *Store) read(d Digest, start func(size int), sink func([]byte)) error {
	var moved int
	defer func() { s.noteMapped(moved) }()
	corrupt := func(format string, args ...any) error {
		why := fmt.Sprintf(format, args...)
		s.logf("artifacts: blob %s is corrupt (%s); treating it as missing", d, why)
		return fmt.Errorf("%w: blob %s is corrupt: %s", ErrNotFound, d, why)
	}
	return s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(blobKey(d))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("%w: blob %s", ErrNotFound, d)
		}
		if err != nil {
			return fmt.Errorf("artifacts: get blob %s: %w", d.Short(), err)
		}
		recBytes, err := item.ValueCopy(nil)
		if err != nil {
			return fmt.Errorf("artifacts: get blob %s: %w", d.Short(), err)
		}
		moved += len(recBytes)
		rec, err := decodeRecord(recBytes)
		if err != nil {
			return corrupt("bad record: %v", err)
		}
		start(rec.size)
		if rec.chunks == nil {
			if Sum(rec.inline) != d {
				return corrupt("inline bytes do not match digest")
			}
			sink(rec.inline)
			return nil
		}
		h := sha256.New()
		for _, c := range rec.chunks {
			item, err := txn.Get(chunkKey(c.d))
			if errors.Is(err, badger.ErrKeyNotFound) {
				return corrupt("chunk %s missing", c.d)
			}
			if err != nil {
				return fmt.Errorf("artifacts: get blob %s: %w", d.Short(), err)
			}
			var bad error
			err = item.Value(func(v []byte) error {
				if len(v) != c.size {
					bad = corrupt("chunk %s has %d bytes, want %d", c.d, len(v), c.size)
					return nil
				}
				if Sum(v) != c.d {
					bad = corrupt("chunk %s does not match its digest", c.d)
					return nil
				}
				moved += len(v)
				h.Write(v)
				sink(v)
				return nil
			})
			if err != nil {
				return fmt.Errorf("artifacts: get blob %s: %w", d.Short(), err)
			}
			if bad != nil {
				return bad
			}
		}
		if Digest(h.Sum(nil)) != d {
			return corrupt("chunks do not add up to the blob's digest")
		}
		return nil
	})
}
