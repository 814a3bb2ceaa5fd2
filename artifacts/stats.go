package artifacts

import (
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// Stats summarizes a store's contents. It is computed by scanning the
// records (not the chunk bytes), so it costs time proportional to the number
// of blobs plus the bytes of inline blobs.
type Stats struct {
	Blobs       int64 // blob records
	InlineBlobs int64 // blob records holding their bytes inline
	BlobBytes   int64 // sum of all blobs' sizes, as if stored without dedupe
	Chunks      int64 // distinct chunks stored (including any no blob lists)
	ChunkRefs   int64 // chunk references summed over chunked blobs; ChunkRefs - Chunks ≈ chunks saved by dedupe
	ChunkBytes  int64 // bytes of distinct chunks listed by at least one blob
	StoredBytes int64 // ChunkBytes plus inline blobs' bytes: the payload actually kept
	Actions     int64 // action-cache entries
	Refs        int64 // refs
}

// Stats scans the store and returns its Stats.
func (s *Store) Stats() (Stats, error) {
	var st Stats
	listed := make(map[Digest]int)
	err := s.view(func(txn *badger.Txn) error {
		count := func(prefix string, fn func(item *badger.Item) error) error {
			opt := badger.DefaultIteratorOptions
			opt.PrefetchValues = false
			opt.Prefix = []byte(prefix)
			it := txn.NewIterator(opt)
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				if err := fn(it.Item()); err != nil {
					return err
				}
			}
			return nil
		}
		if err := count(prefixBlob, func(item *badger.Item) error {
			st.Blobs++
			return item.Value(func(v []byte) error {
				rec, err := decodeRecord(v)
				if err != nil {
					return nil // corrupt; Get will report it
				}
				st.BlobBytes += int64(rec.size)
				if rec.chunks == nil {
					st.InlineBlobs++
					st.StoredBytes += int64(rec.size)
				}
				for _, c := range rec.chunks {
					st.ChunkRefs++
					listed[c.d] = c.size
				}
				return nil
			})
		}); err != nil {
			return err
		}
		if err := count(prefixChunk, func(*badger.Item) error { st.Chunks++; return nil }); err != nil {
			return err
		}
		if err := count(prefixAction, func(*badger.Item) error { st.Actions++; return nil }); err != nil {
			return err
		}
		return count(prefixRef, func(*badger.Item) error { st.Refs++; return nil })
	})
	if err != nil {
		return Stats{}, fmt.Errorf("artifacts: stats: %w", err)
	}
	for _, n := range listed {
		st.ChunkBytes += int64(n)
	}
	st.StoredBytes += st.ChunkBytes
	return st, nil
}
