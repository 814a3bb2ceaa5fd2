package artifacts

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/y"
	"google.golang.org/protobuf/proto"
)

// A tableBlock is where one block of a table file lies: its entries from start, its entry
// offsets from offs, its trailer ending at end.
type tableBlock struct{ start, offs, end int }

// tableBlocks finds a table's blocks in raw as readIntactBlocks does, by their trailers
// and checksums, from the start of the file.
func tableBlocks(t *testing.T, raw []byte) []tableBlock {
	t.Helper()
	var out []tableBlock
	start := 0
	for e := 12; e <= blocksEnd(raw); e++ {
		cl := int(binary.BigEndian.Uint32(raw[e-4 : e]))
		if cl < 1 || cl > 32 || e-8-cl < start {
			continue
		}
		var cs pb.Checksum
		if proto.Unmarshal(raw[e-4-cl:e-4], &cs) != nil || cs.Sum == 0 || y.VerifyChecksum(raw[start:e-4-cl], &cs) != nil {
			continue
		}
		n := int(binary.BigEndian.Uint32(raw[e-8-cl : e-4-cl]))
		out = append(out, tableBlock{start: start, offs: e - 8 - cl - 4*n, end: e})
		start = e
	}
	if len(out) < 3 {
		t.Fatalf("found %d blocks in the table", len(out))
	}
	return out
}

// One damaged byte in each part of a table — a block's entry header, its entry offsets,
// its data, the index, the footer — is refused at open as damage naming the table (exit
// 4), never opened: Badger checks no block's checksum as it reads or compacts, and before
// every block was checked at open, the first three opened, and the first compaction to
// meet the block panicked on Badger's own goroutine (issue 69: "slice bounds out of
// range" in compactBuildTables), ending the process; fsck --salvage did too. Salvage
// recovers every blob but those whose record lay in the damaged block.
func TestOneDamagedByteInEachPartOfATable(t *testing.T) {
	const n = 300
	clean := filepath.Join(t.TempDir(), "clean")
	blobs, table := tableStore(t, clean, n)
	raw, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	blocks := tableBlocks(t, raw)
	b := blocks[len(blocks)/2]
	parts := []struct {
		name  string
		at    int
		block *tableBlock
	}{
		{"entry header", b.start + 2, &b},
		{"entry offsets", b.offs + 5, &b},
		{"data", (b.start + b.offs) / 2, &b},
		{"index", len(raw) - 100, nil},
		{"footer", len(raw) - 2, nil},
	}
	for _, p := range parts {
		t.Run(p.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if err := os.CopyFS(dir, os.DirFS(clean)); err != nil {
				t.Fatal(err)
			}
			flipped := append([]byte(nil), raw...)
			flipped[p.at] ^= 0x80
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(table)), flipped, 0o644); err != nil {
				t.Fatal(err)
			}
			wantDamaged(t, dir, table)
			for _, open := range []func(string, Options) (*Store, error){Open, OpenReader} {
				if s, err := open(dir, Options{NoCompactions: true}); err == nil {
					s.Close()
					t.Fatal("a damaged table opened")
				} else if !errors.Is(err, ErrDamaged) {
					t.Fatalf("want ErrDamaged, got %v", err)
				}
			}
			// Intact: every blob whose record does not lie in the damaged block. A key is
			// stored after its overlap with the block's first key ("b/" and a byte or so),
			// so its digest's tail is what the block holds.
			want := map[Digest]bool{}
			for _, d := range blobs {
				at := strings.Index(string(raw), string(d[4:]))
				if p.block == nil || at < p.block.start || at >= p.block.end {
					want[d] = true
				}
			}
			r := salvageAll(t, dir, blobs, want)
			if r.Blobs != len(want) {
				t.Errorf("salvaged %d blobs, want the %d outside the damaged block", r.Blobs, len(want))
			}
			if p.block == nil && (r.Blobs != len(blobs) || r.Actions != 6 || r.Refs != 1) {
				t.Errorf("salvage: %+v", r)
			}
			if !strings.Contains(strings.Join(r.Fixes, "\n"), filepath.Base(table)) {
				t.Errorf("salvage does not name the table: %q", r.Fixes)
			}
		})
	}
}
