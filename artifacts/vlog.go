package artifacts

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"
)

// A valueLogDamage is a bad entry in a value log that intact entries follow.
type valueLogDamage struct {
	name      string // 000001.vlog
	bad, next int64  // the bad entry's offset, and the next intact entry's
}

// newestValueLog returns the path and id of the value log with the highest id in dir, or
// "" when there is none.
func newestValueLog(dir string) (string, uint32) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	best, bestID := "", uint32(0)
	for _, p := range logs {
		id, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(p), ".vlog"), 10, 32)
		if err != nil {
			continue
		}
		if best == "" || uint32(id) > bestID {
			best, bestID = p, uint32(id)
		}
	}
	return best, bestID
}

// checkNewestValueLog reads the newest value log in dir as Badger does when it opens a
// store read-write: entry by entry, each checked against its CRC, up to the first that
// fails. Badger truncates the log there (value.go: "see if it needs truncation"), which
// is right for the torn tail a killed writer leaves, and loses every value after it when
// the bad entry is damage in the middle. So where an intact entry follows the bad one it
// returns that damage, for Open to refuse the store rather than let Badger cut it; a log
// whose bad stretch runs to its end (zeros, a torn write) is Badger's to truncate.
func checkNewestValueLog(dir string) (*valueLogDamage, error) {
	path, _ := newestValueLog(dir)
	if path == "" {
		return nil, nil
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() <= vlogHeaderSize {
		return nil, nil // Badger says what is wrong with a file that is not a log
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("artifacts: read value log %s: %w", path, err)
	}
	defer mf.Close(-1)
	data := mf.Data[:st.Size()]
	bad := walkValueLog(data, vlogHeaderSize)
	if bad >= int64(len(data)) {
		return nil, nil
	}
	if next := nextValueLogEntry(data, bad+1); next >= 0 {
		return &valueLogDamage{name: filepath.Base(path), bad: bad, next: next}, nil
	}
	return nil, nil
}

// walkValueLog returns the offset of the first entry from off on that does not decode or
// fails its CRC (len(data) if none does), as Badger's iteration stops.
func walkValueLog(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		n, ok := valueLogEntryAt(data, off, false)
		if !ok {
			return off
		}
		off += n
	}
	return off
}

// nextValueLogEntry returns the offset of the first intact entry of fedpipe's (a key in
// one of its namespaces) at or after from, or -1: how a reader resynchronizes past a bad
// entry. An entry's CRC covers its header, key and value, so a false match is a 1 in 2³²
// chance at a position that already decodes as a plausible header and key.
func nextValueLogEntry(data []byte, from int64) int64 {
	for q := from; q+7 < int64(len(data)); q++ {
		if data[q+2] == 0 { // a key length of 0 (or a long run of zeros): no entry here
			continue
		}
		if _, ok := valueLogEntryAt(data, q, true); ok {
			return q
		}
	}
	return -1
}

// valueLogEntryAt decodes the value-log entry at off — meta and user-meta bytes, the key
// and value lengths and the expiry as uvarints, the key, the value, and a big-endian
// CRC-32C of all of them — and returns its length if it is whole and its CRC matches.
// fedpipeKey asks also that the key be one of fedpipe's ("b/…", a version suffix), which
// a resynchronizing reader uses to reject positions cheaply before computing a CRC.
func valueLogEntryAt(data []byte, off int64, fedpipeKey bool) (int64, bool) {
	if off+2 >= int64(len(data)) {
		return 0, false
	}
	i := off + 2
	klen, c1 := binary.Uvarint(data[i:min(i+10, int64(len(data)))])
	if c1 <= 0 {
		return 0, false
	}
	i += int64(c1)
	vlen, c2 := binary.Uvarint(data[i:min(i+10, int64(len(data)))])
	if c2 <= 0 {
		return 0, false
	}
	i += int64(c2)
	_, c3 := binary.Uvarint(data[i:min(i+10, int64(len(data)))])
	if c3 <= 0 {
		return 0, false
	}
	i += int64(c3)
	if klen == 0 || klen > 1<<16 || vlen > uint64(len(data)) {
		return 0, false
	}
	end := i + int64(klen) + int64(vlen) + crc32.Size
	if end > int64(len(data)) {
		return 0, false
	}
	if fedpipeKey {
		k := data[i : i+int64(klen)]
		if len(k) < 10 || k[1] != '/' || !strings.ContainsRune("bcarm", rune(k[0])) {
			return 0, false
		}
	}
	body := data[off : end-crc32.Size]
	if crc32.Checksum(body, y.CastagnoliCrcTable) != binary.BigEndian.Uint32(data[end-crc32.Size:end]) {
		return 0, false
	}
	return end - off, true
}

// valueLogDamagedError is Open's refusal of a store whose newest value log is damaged
// before intact entries.
func valueLogDamagedError(dir string, d *valueLogDamage) error {
	return fmt.Errorf("%w: store %s: value log %s has a damaged entry at byte %d, and intact entries follow it (the next at byte %d); "+
		"opening the store would cut the log there and lose them, so it is left as it is: `fedpipe fsck --salvage` copies every readable entry into a fresh store",
		ErrDamaged, dir, filepath.Join(dir, d.name), d.bad, d.next)
}

// shieldValueLog adds to dir, a salvage's working copy whose newest value log is damaged
// before intact entries, an empty value log after it: Badger then truncates and appends
// to the empty one and leaves the damaged log whole, so every entry after the bad one is
// read through the pointers that lead to it.
func shieldValueLog(dir string) (string, error) {
	_, id := newestValueLog(dir)
	name := fmt.Sprintf("%06d.vlog", id+1)
	// The header: data-key id 0 (unencrypted) and a base IV, unused without encryption.
	if err := os.WriteFile(filepath.Join(dir, name), make([]byte, vlogHeaderSize), 0o644); err != nil {
		return "", err
	}
	return name, nil
}

// Badger's transaction bits in a memtable log entry's meta byte (value.go in Badger).
const (
	bitTxn    = 1 << 6
	bitFinTxn = 1 << 7
)

// walEnd returns where the replayable part of a memtable's log (data, a whole .mem file)
// ends, as Badger's replay decides: after the last entry outside a transaction or the last
// entry that ends one, among the entries that decode and pass their CRC. A writer's
// memtable log is preallocated (twice the memtable size) and filled as it goes; Badger
// in read-only mode refuses one with anything after that end ("truncate needed").
func walEnd(data []byte) int64 {
	if len(data) < vlogHeaderSize {
		return 0
	}
	off, end, inTxn := int64(vlogHeaderSize), int64(vlogHeaderSize), false
	for off < int64(len(data)) {
		n, ok := valueLogEntryAt(data, off, false)
		if !ok {
			break
		}
		meta := data[off]
		off += n
		switch {
		case meta&bitTxn != 0:
			inTxn = true
		case meta&bitFinTxn != 0:
			inTxn, end = false, off
		case !inTxn:
			end = off
		default:
			return end // an entry outside the transaction inside it: Badger stops here
		}
	}
	return end
}

// copyWAL copies the memtable log src to dst up to its replayable end (walEnd).
func copyWAL(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeNew(dst, data[:walEnd(data)])
}

// writeNew writes data into a new file dst.
func writeNew(dst string, data []byte) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	if _, err := out.Write(data); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
