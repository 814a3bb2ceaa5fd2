package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A truncated table or a byte flipped in a table's index (issue 61) makes fsck, status,
// gc and run exit 4 naming the table, never panic (a truncated table panicked on one of
// Badger's goroutines, exit 2; a flipped index byte gave exit 1); fsck --salvage then
// brings every result back, so the next run computes nothing and fsck passes.
func TestDamagedTableExits4AndSalvages(t *testing.T) {
	for _, damage := range []string{"truncate", "flip-100", "flip-500", "flip-block"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			store := filepath.Join(dir, "store")
			m := writeManifest(t, dir, tinyManifest)
			runJSON(t, "run", m, "--store", store)
			tables, _ := filepath.Glob(filepath.Join(store, "*.sst"))
			if len(tables) == 0 {
				t.Fatal("the store has no table")
			}
			table := tables[len(tables)-1]
			raw, err := os.ReadFile(table)
			if err != nil {
				t.Fatal(err)
			}
			switch damage {
			case "truncate":
				raw = raw[:len(raw)-min(len(raw)/50, 1278)]
			case "flip-block":
				// In the middle of the blocks, before the index (its length in the 4 bytes
				// before the footer's checksum, whose length is in the last 4): Badger
				// checks no block's checksum, and before the open checked them all, this
				// store opened and the first compaction or read to meet the block panicked.
				cl := int(binary.BigEndian.Uint32(raw[len(raw)-4:]))
				il := int(binary.BigEndian.Uint32(raw[len(raw)-8-cl:]))
				raw[(len(raw)-8-cl-il)/2] ^= 0x20
			default:
				var back int
				fmt.Sscanf(damage, "flip-%d", &back)
				raw[len(raw)-min(back, len(raw)/2)] ^= 0x20
			}
			if err := os.WriteFile(table, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"fsck"}, {"status", m}, {"gc", m}, {"run", m}} {
				code, out, errs := fedpipe(t, append(args, "--store", store)...)
				if code != exitEnvironment || !strings.Contains(errs, filepath.Base(table)) || strings.Contains(errs+out, "panic") {
					t.Errorf("%s: exit %d, want %d naming %s\n%s%s", args[0], code, exitEnvironment, filepath.Base(table), out, errs)
				}
			}
			code, out, errs := fedpipe(t, "fsck", "--salvage", "--store", store)
			if code != 0 || (damage != "flip-block" && !strings.Contains(out, "lost 0 blobs, 0 actions")) || !strings.Contains(out, filepath.Base(table)) {
				t.Fatalf("fsck --salvage: exit %d\n%s%s", code, out, errs)
			}
			if damage == "flip-block" {
				// Only what the damaged block held is lost, and the next run recomputes it.
				t.Logf("salvage: %s", out)
				runJSON(t, "run", m, "--store", store)
			}
			if code, out, errs := fedpipe(t, "fsck", "--store", store); code != 0 {
				t.Errorf("fsck after salvage: exit %d\n%s%s", code, out, errs)
			}
			for _, s := range runJSON(t, "run", m, "--store", store).Stages {
				if s.State != "cached" {
					t.Errorf("after salvage %s %s", s.Name, s.State)
				}
			}
		})
	}
}

// A flipped byte in the middle of the newest value log (issue 69: the first `status`
// truncated it, 155 of 355 blobs were gone for good, and `ls` still said "cached") makes
// status, ls, report, fsck and run exit 4 naming the log and the offset, and leaves the
// file as it was; fsck --salvage then keeps what follows the bad entry, and the next run
// recomputes at most what the flip hit.
func TestDamagedValueLogExits4AndIsKept(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	runJSON(t, "run", m, "--store", store)
	logs, _ := filepath.Glob(filepath.Join(store, "*.vlog"))
	var vlog string
	var raw []byte
	for _, p := range logs { // the newest that holds values
		if b, err := os.ReadFile(p); err == nil && len(b) > 4096 {
			vlog, raw = p, b
		}
	}
	if vlog == "" || vlog != logs[len(logs)-1] {
		t.Fatalf("no newest value log with values: %v", logs)
	}
	raw[len(raw)/2] ^= 0x08
	if err := os.WriteFile(vlog, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status", m}, {"ls", m}, {"report", m, "--out", filepath.Join(dir, "rep")}, {"fsck"}, {"run", m}} {
		code, out, errs := fedpipe(t, append(args, "--store", store)...)
		if code != exitEnvironment || !strings.Contains(errs, filepath.Base(vlog)) || !strings.Contains(errs, "at byte") || strings.Contains(errs+out, "panic") {
			t.Errorf("%s: exit %d, want %d naming %s\n%s%s", args[0], code, exitEnvironment, filepath.Base(vlog), out, errs)
		}
		if st, err := os.Stat(vlog); err != nil || st.Size() != int64(len(raw)) {
			t.Fatalf("after %s the value log is %v bytes, was %d", args[0], st.Size(), len(raw))
		}
	}
	code, out, errs := fedpipe(t, "fsck", "--salvage", "--store", store)
	if code != 0 || !strings.Contains(out, filepath.Base(vlog)) {
		t.Fatalf("fsck --salvage: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("salvage: %s", out)
	if code, out, errs := fedpipe(t, "fsck", "--store", store); code != 0 {
		t.Errorf("fsck after salvage: exit %d\n%s%s", code, out, errs)
	}
	runJSON(t, "run", m, "--store", store)
}
