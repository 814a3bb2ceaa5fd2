package main

import (
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
	for _, damage := range []string{"truncate", "flip-100", "flip-500"} {
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
			if code != 0 || !strings.Contains(out, "lost 0 blobs, 0 actions") || !strings.Contains(out, filepath.Base(table)) {
				t.Fatalf("fsck --salvage: exit %d\n%s%s", code, out, errs)
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
