package artifacts

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"

	badger "github.com/dgraph-io/badger/v4"
)

// ErrDamaged matches (errors.Is) the error of an open or a read that the store's damage
// stops: a table that is truncated, missing, or with an index, footer or block failing its
// checksum (Badger checks no block as it reads, and a flipped bit in a block makes it index
// out of the block and panic), a newest value log with a bad entry before intact ones, a
// MANIFEST that is not a file. A read then fails with this error instead of crashing the
// process; `fedpipe fsck --salvage` copies every entry that can still be read into a fresh
// store.
var ErrDamaged = errors.New("artifacts: the store is damaged")

// view runs fn in a read-only transaction, turning a panic of Badger reading damaged
// tables into an error wrapping ErrDamaged.
func (s *Store) view(fn func(txn *badger.Txn) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = s.damagedError(p)
		}
	}()
	return s.db.View(fn)
}

// damagedError describes a panic of Badger's (its first line) as damage to the store.
func (s *Store) damagedError(p any) error {
	where := "a table"
	if m := panicTable.FindStringSubmatch(fmt.Sprint(p)); m != nil {
		where = fmt.Sprintf("table %06s.sst", m[1])
	}
	return fmt.Errorf("%w: store %s: Badger cannot decode %s; `fedpipe fsck --salvage` copies every readable entry into a fresh store",
		ErrDamaged, s.dir, where)
}

// panicTable finds the table Badger names in the panic of a block it cannot decode.
var panicTable = regexp.MustCompile(`Table ID: (\d+)`)

// scanKeys lists the keys under prefix (without it), in order. A damaged stretch of the
// tables fails it with ErrDamaged unless resilient: it then resumes after the damage,
// seeking to a key past the last one read, with a jump that grows (the last byte
// incremented, then the one before, …) until a seek reads on, and names each stretch it
// skipped in gaps. It is how Salvage reads what lies beyond a damaged block.
func (s *Store) scanKeys(prefix string, resilient bool) (keys [][]byte, gaps []string, err error) {
	pfx := []byte(prefix)
	start := pfx
	pos := -1          // the byte a resume increments; -1: not resuming
	var gapFrom []byte // the last key read before the stretch being skipped
	for {
		resumeAt := start
		var last []byte
		err = s.view(func(txn *badger.Txn) error {
			opt := badger.DefaultIteratorOptions
			opt.PrefetchValues = false
			opt.Prefix = pfx
			it := txn.NewIterator(opt)
			defer it.Close()
			for it.Seek(start); it.ValidForPrefix(pfx); it.Next() {
				k := it.Item().KeyCopy(nil)
				keys = append(keys, k[len(pfx):])
				last = k
			}
			return nil
		})
		if gapFrom != nil && (last != nil || err == nil) {
			gaps = append(gaps, fmt.Sprintf("keys %q… between %x and %x: unreadable", prefix, gapFrom[len(pfx):], resumeAt[len(pfx):]))
			gapFrom = nil
		}
		if err == nil || !resilient || !errors.Is(err, ErrDamaged) {
			return keys, gaps, err
		}
		from := start
		if gapFrom == nil {
			gapFrom = start
			if last != nil {
				gapFrom = last
			}
		}
		switch {
		case last != nil:
			from, pos = last, len(last)-1 // progress: resume with the smallest jump
		case pos < 0:
			pos = max(len(from)-1, len(pfx))
		case pos > len(pfx):
			pos-- // no progress since the last jump: a larger one
		}
		// At the first byte after the prefix the jumps stay that size (1/256 of the keys),
		// moving on step by step until one reads on or the last step is taken.
		next, ok := keyAfter(from, pos, len(pfx))
		if !ok {
			gaps = append(gaps, fmt.Sprintf("keys %q… after %x: unreadable (%v)", prefix, gapFrom[len(pfx):], err))
			return keys, gaps, nil
		}
		start = next
	}
}

// keyAfter returns the smallest key greater than every key that starts with key[:pos+1]:
// key[:pos+1] with its last byte incremented (carrying leftwards), or false when no byte
// at or after minPos can be incremented.
func keyAfter(key []byte, pos, minPos int) ([]byte, bool) {
	if pos >= len(key) {
		next := append(bytes.Clone(key), 0)
		return next, true
	}
	next := bytes.Clone(key[:pos+1])
	for i := pos; i >= minPos; i-- {
		if next[i] != 0xff {
			next[i]++
			return next[:i+1], true
		}
	}
	return nil, false
}
