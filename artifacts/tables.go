package artifacts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/fb"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"
	"google.golang.org/protobuf/proto"
)

// A damagedTable is a table of the store's manifest that Badger could not open: missing,
// truncated, or with a footer or index that does not check out.
type damagedTable struct {
	id   uint64
	name string // the file's name, 000001.sst
	why  string
}

func (d damagedTable) String() string { return d.name + ": " + d.why }

// checkTables opens, one by one and without Badger's database, every table the store's
// manifest lists, the way Badger's open would. Badger opens its tables on goroutines of
// its own, where a panic on a truncated table ("slice bounds out of range") cannot be
// recovered and ends the process; here it is recovered, and every table that is missing,
// that panics or whose index fails its checksum is returned. A manifest that cannot be
// read is left for Badger to report.
func checkTables(dir string, opt badger.Options) []damagedTable {
	mf, err := readManifest(dir, opt)
	if err != nil {
		return nil
	}
	ids := make([]uint64, 0, len(mf.Tables))
	for id := range mf.Tables {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var bad []damagedTable
	for _, id := range ids {
		name := filepath.Base(table.NewFilename(id, dir))
		if why := checkTable(filepath.Join(dir, name), mf.Tables[id].Compression); why != "" {
			bad = append(bad, damagedTable{id: id, name: name, why: why})
		}
	}
	return bad
}

// readManifest replays the store's MANIFEST; a store without one has no tables.
func readManifest(dir string, opt badger.Options) (badger.Manifest, error) {
	f, err := os.Open(filepath.Join(dir, badger.ManifestFilename))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return badger.Manifest{Tables: map[uint64]badger.TableManifest{}}, nil
		}
		return badger.Manifest{}, err
	}
	defer f.Close()
	m, _, err := badger.ReplayManifestFile(f, opt.ExternalMagicVersion, opt)
	return m, err
}

// checkTable opens the table file at path read-only, as Badger would, and says what is
// wrong with it ("" if nothing).
func checkTable(path string, compression options.CompressionType) (why string) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "missing (the manifest lists it)"
		}
		return err.Error()
	}
	if !st.Mode().IsRegular() {
		return "not a regular file"
	}
	if st.Size() < 8 {
		return fmt.Sprintf("truncated (%d bytes)", st.Size())
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err.Error()
	}
	defer mf.Close(-1)
	defer func() {
		if p := recover(); p != nil {
			why = fmt.Sprintf("undecodable (%d bytes: truncated, or its footer, index or a block's trailer damaged)", st.Size())
		}
	}()
	// The table is neither closed nor released through its reference count: releasing the
	// last reference deletes the file.
	t, err := table.OpenTable(mf, table.Options{ChkMode: options.NoVerification, Compression: compression, BlockSize: 4 << 10})
	if err != nil {
		if strings.Contains(err.Error(), "checksum mismatch") {
			return "damaged: its index fails its checksum"
		}
		msg := err.Error()
		if i := strings.LastIndex(msg, "err: "); i >= 0 {
			msg = msg[i+len("err: "):]
		}
		return "damaged: its index or footer cannot be read (" + msg + ")"
	}
	// Badger checks no block's checksum as it reads or compacts it, and a damaged block
	// (its entries, their offsets, its header) makes it index out of the block and panic,
	// in a compaction on a goroutine of its own: every block is checked here, before Badger
	// opens the store.
	if block, off, ok := verifyBlocks(t); !ok {
		if block < 0 {
			return "damaged: a block fails its checksum"
		}
		return fmt.Sprintf("damaged: its block %d (at byte %d) fails its checksum", block, off)
	}
	return ""
}

// verifyBlocks checks the checksum of every block of t (Badger's VerifyChecksum), and
// returns the first block that fails it, with its offset in the file. A block whose bounds
// or trailer cannot even be read panics inside Badger: the caller recovers it.
func verifyBlocks(t *table.Table) (block int, offset uint64, ok bool) {
	err := t.VerifyChecksum()
	if err == nil {
		return 0, 0, true
	}
	block, offset = -1, 0
	if m := failedBlock.FindStringSubmatch(err.Error()); m != nil {
		block, _ = strconv.Atoi(m[1])
		offset, _ = strconv.ParseUint(m[2], 10, 64)
	}
	return block, offset, false
}

// failedBlock finds the block and its offset in Badger's VerifyChecksum error.
var failedBlock = regexp.MustCompile(`block: (\d+), offset:(\d+)`)

// tablesDamagedError is the error of Open for a store with damaged tables.
func tablesDamagedError(dir string, bad []damagedTable) error {
	what := ""
	for i, b := range bad {
		if i > 0 {
			what += "; "
		}
		what += "table " + filepath.Join(dir, b.name) + " is " + b.why
	}
	return fmt.Errorf("%w: store %s: %s; `fedpipe fsck --salvage` copies every readable entry into a fresh store",
		ErrDamaged, dir, what)
}

// dropTables appends to the MANIFEST in dir the deletion of each table of bad, so that
// Badger opens the store without them, and moves their files aside (NAME.damaged).
func dropTables(dir string, bad []damagedTable) error {
	changes := &pb.ManifestChangeSet{}
	for _, b := range bad {
		changes.Changes = append(changes.Changes, &pb.ManifestChange{Id: b.id, Op: pb.ManifestChange_DELETE})
	}
	buf, err := proto.Marshal(changes)
	if err != nil {
		return err
	}
	var head [8]byte
	binary.BigEndian.PutUint32(head[0:4], uint32(len(buf)))
	binary.BigEndian.PutUint32(head[4:8], crc32.Checksum(buf, y.CastagnoliCrcTable))
	f, err := os.OpenFile(filepath.Join(dir, badger.ManifestFilename), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(head[:], buf...)); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, b := range bad {
		p := filepath.Join(dir, b.name)
		if err := os.Rename(p, p+".damaged"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Badger's value meta bits (value.go in Badger).
const (
	bitDelete       = 1 << 0
	bitValuePointer = 1 << 1
)

// A tableEntry is one entry read from a table's intact block.
type tableEntry struct {
	key     []byte // without Badger's version suffix
	version uint64
	meta    byte
	value   []byte // the value, or a value pointer when meta has bitValuePointer
}

// readIntactBlocks reads every entry of every block of a table file (data) whose own
// checksum verifies, without the table's index: a truncated table or one whose index or
// footer is damaged still has its blocks, each of which ends with its entry offsets, their
// count, a checksum and the checksum's length. Blocks are found by that trailer and
// trusted only when the checksum over the block matches. It reports how many blocks it
// read.
func readIntactBlocks(data []byte) (entries []tableEntry, blocks int) {
	entries, blocks, _ = readBlocks(data)
	return entries, blocks
}

// readBlocks is readIntactBlocks, which also returns the blocks it could not read when
// the table's index says where they lie (nil otherwise).
func readBlocks(data []byte) (entries []tableEntry, blocks int, damaged [][2]int) {
	if bounds, ok := indexedBlocks(data); ok {
		// The index checks out: it says exactly where each block lies, so a block whose
		// trailer is damaged costs only itself.
		for _, b := range bounds {
			if got, ok := readBlock(data[b[0]:b[1]]); ok {
				entries = append(entries, got...)
				blocks++
			} else {
				damaged = append(damaged, b)
			}
		}
		return entries, blocks, damaged
	}
	entries, blocks = scanIntactBlocks(data)
	return entries, blocks, nil
}

// scanIntactBlocks finds the intact blocks of data by their trailers (readIntactBlocks).
func scanIntactBlocks(data []byte) (entries []tableEntry, blocks int) {
	starts := []int{0}
	for e := 12; e <= len(data); e++ {
		cl := int(binary.BigEndian.Uint32(data[e-4 : e]))
		if cl < 1 || cl > 32 || e-8-cl < 0 {
			continue
		}
		var cs pb.Checksum
		if proto.Unmarshal(data[e-4-cl:e-4], &cs) != nil || cs.Sum == 0 {
			continue
		}
		n := int(binary.BigEndian.Uint32(data[e-8-cl : e-4-cl]))
		offStart := e - 8 - cl - 4*n
		if n < 1 || n > 1<<20 || offStart < 0 {
			// A damaged entry count: this block is lost, but the next one starts here.
			starts = append(starts, e)
			continue
		}
		// The block starts at the end of an earlier block (or at 0): try the nearest few.
		for i := len(starts) - 1; i >= 0 && i >= len(starts)-4; i-- {
			s := starts[i]
			if s > offStart || y.VerifyChecksum(data[s:e-4-cl], &cs) != nil {
				continue
			}
			if got, ok := decodeBlock(data[s:offStart], data[offStart:e-8-cl], n); ok {
				entries = append(entries, got...)
				blocks++
				break
			}
		}
		starts = append(starts, e)
	}
	return entries, blocks
}

// indexedBlocks returns the bounds of every block of the table in data as its index lists
// them, when the footer and the index's checksum check out and every bound lies within
// the blocks.
func indexedBlocks(data []byte) (bounds [][2]int, ok bool) {
	defer func() {
		if recover() != nil {
			bounds, ok = nil, false
		}
	}()
	if len(data) < 8 {
		return nil, false
	}
	cl := int(binary.BigEndian.Uint32(data[len(data)-4:]))
	if cl < 1 || cl > 64 || len(data)-8-cl < 0 {
		return nil, false
	}
	var cs pb.Checksum
	if proto.Unmarshal(data[len(data)-4-cl:len(data)-4], &cs) != nil {
		return nil, false
	}
	il := int(binary.BigEndian.Uint32(data[len(data)-8-cl:]))
	start := len(data) - 8 - cl - il
	if il < 1 || start < 0 || y.VerifyChecksum(data[start:start+il], &cs) != nil {
		return nil, false
	}
	idx := fb.GetRootAsTableIndex(data[start:start+il], 0)
	var bo fb.BlockOffset
	for i := range idx.OffsetsLength() {
		if !idx.Offsets(&bo, i) {
			return nil, false
		}
		from, to := int(bo.Offset()), int(bo.Offset())+int(bo.Len())
		if to > start || from > to {
			return nil, false
		}
		bounds = append(bounds, [2]int{from, to})
	}
	return bounds, true
}

// readBlock decodes the entries of one block (its bytes exactly) if its checksum verifies.
func readBlock(b []byte) ([]tableEntry, bool) {
	if len(b) < 12 {
		return nil, false
	}
	e := len(b)
	cl := int(binary.BigEndian.Uint32(b[e-4:]))
	if cl < 1 || cl > 32 || e-8-cl < 0 {
		return nil, false
	}
	var cs pb.Checksum
	if proto.Unmarshal(b[e-4-cl:e-4], &cs) != nil || y.VerifyChecksum(b[:e-4-cl], &cs) != nil {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(b[e-8-cl:]))
	offStart := e - 8 - cl - 4*n
	if n < 1 || offStart < 0 {
		return nil, false
	}
	return decodeBlock(b[:offStart], b[offStart:e-8-cl], n)
}

// decodeBlock decodes the entries of a block whose checksum verified: entry bytes and n
// little-endian entry offsets. Each entry is a header (the key's overlap with the block's
// first key and the length of the rest, two little-endian uint16s), the rest of the key,
// and the value (meta, user meta, expiry as a uvarint, the value bytes).
func decodeBlock(ents, offs []byte, n int) ([]tableEntry, bool) {
	offsets := make([]int, n+1)
	for i := range n {
		offsets[i] = int(binary.LittleEndian.Uint32(offs[4*i:]))
	}
	offsets[n] = len(ents)
	if offsets[0] != 0 {
		return nil, false
	}
	var base []byte
	out := make([]tableEntry, 0, n)
	for i := range n {
		if offsets[i+1] < offsets[i]+4 || offsets[i+1] > len(ents) {
			return nil, false
		}
		e := ents[offsets[i]:offsets[i+1]]
		overlap := int(binary.LittleEndian.Uint16(e[0:2]))
		diff := int(binary.LittleEndian.Uint16(e[2:4]))
		if 4+diff > len(e) || (i == 0 && overlap != 0) || overlap > len(base) {
			return nil, false
		}
		key := append(append([]byte(nil), base[:overlap]...), e[4:4+diff]...)
		if i == 0 {
			base = key
		}
		v := e[4+diff:]
		if len(v) < 2 || len(key) < 8 {
			return nil, false
		}
		_, k := binary.Uvarint(v[2:])
		if k <= 0 {
			return nil, false
		}
		out = append(out, tableEntry{key: y.ParseKey(key), version: y.ParseTs(key), meta: v[0], value: append([]byte(nil), v[2+k:]...)})
	}
	return out, true
}

// readValuePointer reads the value a table entry points to in dir's value log, checking
// the value-log entry's CRC and that it is the entry of key.
func readValuePointer(dir string, key, ptr []byte) ([]byte, error) {
	if len(ptr) < 12 {
		return nil, errors.New("short value pointer")
	}
	fid := binary.LittleEndian.Uint32(ptr[0:4])
	n := binary.LittleEndian.Uint32(ptr[4:8])
	off := binary.LittleEndian.Uint32(ptr[8:12])
	name := fmt.Sprintf("%06d.vlog", fid)
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || int64(off)+int64(n) > st.Size() || n < 2+3+crc32.Size {
		return nil, fmt.Errorf("value log %s: the entry at %d (%d bytes) is past its end", name, off, n)
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, int64(off)); err != nil {
		return nil, fmt.Errorf("value log %s: %w", name, err)
	}
	body := buf[:len(buf)-crc32.Size]
	if crc32.Checksum(body, y.CastagnoliCrcTable) != binary.BigEndian.Uint32(buf[len(buf)-crc32.Size:]) {
		return nil, fmt.Errorf("value log %s: the entry at %d fails its checksum", name, off)
	}
	i := 2
	klen, c1 := binary.Uvarint(body[i:])
	i += max(c1, 0)
	vlen, c2 := binary.Uvarint(body[i:])
	i += max(c2, 0)
	_, c3 := binary.Uvarint(body[i:])
	i += max(c3, 0)
	if c1 <= 0 || c2 <= 0 || c3 <= 0 || uint64(i)+klen+vlen != uint64(len(body)) {
		return nil, fmt.Errorf("value log %s: the entry at %d is malformed", name, off)
	}
	k := body[i : i+int(klen)]
	if len(k) < 8 || string(k[:len(k)-8]) != string(key) {
		return nil, fmt.Errorf("value log %s: the entry at %d holds another key", name, off)
	}
	return append([]byte(nil), body[i+int(klen):]...), nil
}

// recoverTable reads the intact blocks of the damaged table file at path and writes into
// s every entry of fedpipe's that s lacks (the newest version the table holds of each,
// values that live in the value log of dir read from there and checked). Nothing is
// trusted on that account: Salvage copies on only what verifies. It returns how many
// entries it restored, a description of what it read, and the damaged blocks it lost.
func (s *Store) recoverTable(dir, path string) (restored int, note string, lost []string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, "", nil, err
	}
	entries, blocks, damaged := readBlocks(data)
	newest := map[string]tableEntry{}
	for _, e := range entries {
		if len(e.key) < 2 || e.key[1] != '/' {
			continue // Badger's own keys (!badger!…) and anything not fedpipe's
		}
		if old, ok := newest[string(e.key)]; !ok || e.version > old.version {
			newest[string(e.key)] = e
		}
	}
	keys := make([]string, 0, len(newest))
	for k := range newest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	unreadable := 0
	for _, k := range keys {
		e := newest[k]
		if e.meta&bitDelete != 0 {
			continue
		}
		v := e.value
		if e.meta&bitValuePointer != 0 {
			if v, err = readValuePointer(dir, e.key, e.value); err != nil {
				unreadable++
				continue
			}
		}
		wrote := false
		err := s.update(func(txn *badger.Txn) error {
			if _, err := txn.Get(e.key); !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			wrote = true
			return txn.Set(e.key, v)
		})
		if errors.Is(err, ErrDamaged) {
			unreadable++ // another table's damage is in the way: the copy reports it
			continue
		}
		if err != nil {
			return restored, "", nil, err
		}
		if wrote {
			restored++
		}
	}
	note = fmt.Sprintf("%d intact blocks, %d entries read", blocks, len(newest))
	for _, b := range damaged {
		lost = append(lost, fmt.Sprintf("table %s: the block at bytes %d–%d fails its checksum: the entries in it are lost (what they held is recomputed when needed)",
			filepath.Base(strings.TrimSuffix(path, ".damaged")), b[0], b[1]))
	}
	if unreadable > 0 {
		note += fmt.Sprintf(", %d values unreadable (in the value log, or behind other damage)", unreadable)
	}
	return restored, note, lost, nil
}

// keysInIntactBlocks lists the fedpipe keys (with their namespace) of every block of the
// store's live tables in dir whose checksum verifies and that s still holds (a key Badger
// reports absent was deleted later): the keys a listing that has to skip a damaged
// stretch of the tables would miss. Keys s cannot read are listed too (their read fails
// and is reported).
func (s *Store) keysInIntactBlocks(dir string) []string {
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	seen := map[string]bool{}
	for _, path := range tables {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		entries, _ := readIntactBlocks(data)
		for _, e := range entries {
			if len(e.key) >= 2 && e.key[1] == '/' {
				seen[string(e.key)] = true
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		err := s.view(func(txn *badger.Txn) error {
			_, err := txn.Get([]byte(k))
			return err
		})
		if !errors.Is(err, badger.ErrKeyNotFound) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}
