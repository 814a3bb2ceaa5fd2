package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
)

// bombFrame returns a zstd frame that decodes to n zero bytes (n a multiple of 128 KiB):
// no content size in its header, then one RLE block of 128 KiB zeros after another, 4
// bytes each, so 4 GiB of zeros take 128 KiB and the frame is built at once. (`zstd -dc`
// decodes it to n bytes.)
func bombFrame(n int64) []byte {
	const block = 128 << 10
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38} // magic; no size, no checksum; window 128 KiB
	for i, k := int64(0), n/block; i < k; i++ {
		h := uint32(block<<3 | 1<<1) // RLE block of 128 KiB
		if i == k-1 {
			h |= 1 // the last
		}
		var w [4]byte
		binary.LittleEndian.PutUint32(w[:], h)
		b = append(b, w[0], w[1], w[2], 0x00)
	}
	return b
}

// editJSON rewrites the JSON object in path through edit.
func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	edit(v)
	if b, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writePeakRSS writes this process's peak resident set (VmHWM, in kB, of its own address
// space since exec: wait4's ru_maxrss would carry the forking test binary's) to path.
func writePeakRSS(path string) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			os.WriteFile(path, []byte(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))), 0o644)
		}
	}
}

// measured runs fedpipe as a process and returns its exit code, stderr, wall time and
// peak RSS in bytes (its VmHWM; ru_maxrss where /proc has none).
func measured(t *testing.T, args ...string) (int, string, time.Duration, int64) {
	t.Helper()
	cmd := subprocess(args...)
	peak := filepath.Join(t.TempDir(), "peak")
	cmd.Env = append(cmd.Env, "FEDPIPE_TEST_PEAK_RSS="+peak)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	if b, err := os.ReadFile(peak); err == nil {
		if kb, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			rss = kb * 1024
		}
	}
	return cmd.ProcessState.ExitCode(), errb.String(), took, rss
}

// indexOf is the kept index file of a stage of manifest tiny in dir.
func indexOf(dir, stage string) string {
	return filepath.Join(dir, "cells", "tiny", strings.ReplaceAll(stage, " ", "%20")+".json")
}

// TestDecompressionBombStopsAtRecordedSize: a 128 KiB zstd frame of 4 GiB of zeros placed
// as a blob whose entry records 1 MiB for it (the frame within it), in a kept directory
// and in a remote: `reproduced` and `pull` decode at most a byte past the MiB and exit 4,
// naming the blob, at once and in little memory (on 6a4df14 they decoded all 4 GiB: 2
// minutes and over 11 GB).
func TestDecompressionBombStopsAtRecordedSize(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fedpipe as a process")
	}
	m, kept, entry, blob := keptFedavg(t)
	bomb := bombFrame(4 << 30)
	const recorded = 1 << 20
	d := filepath.Base(blob)
	setSize := func(v map[string]any) {
		delete(v, "sized_binding") // as an entry written before sizes were bound, or by a forger
		sizes, _ := v["sizes"].(map[string]any)
		if sizes == nil {
			sizes = map[string]any{} // an index entry recorded before sizes were bound
			v["sizes"] = sizes
		}
		for name, o := range v["outputs"].(map[string]any) {
			if o == d {
				sizes[name] = recorded
			}
		}
	}
	editJSON(t, entry, setSize)
	editJSON(t, indexOf(kept, "train fedavg seed=0"), setSize) // consistently: the bound is the size itself
	if err := os.WriteFile(blob, bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"reproduced", []string{"reproduced", m, "--kept", kept}},
		{"pull", []string{"pull", m, "--remote", kept, "--store", filepath.Join(t.TempDir(), "s")}},
	} {
		code, errOut, took, rss := measured(t, c.args...)
		t.Logf("%s of a %d-byte frame of 4 GiB under a recorded %d: exit %d in %v, peak RSS %d MB", c.name, len(bomb), recorded, code, took.Round(time.Millisecond), rss>>20)
		if code != exitEnvironment || !strings.Contains(errOut, "more than the 1048576 bytes its entry records") || !strings.Contains(errOut, d) {
			t.Errorf("%s: exit %d, want 4 naming the blob and its recorded size:\n%s", c.name, code, errOut)
		}
		if rss > 200<<20 || took > 10*time.Second { // the decode itself takes milliseconds; the rest is the process starting
			t.Errorf("%s: %v and %d MB peak RSS, want the frame refused at once", c.name, took, rss>>20)
		}
	}
}

// TestKeptSizesAreBound: a kept entry's sizes are part of its binding. Deleted (with a 3
// GiB sparse file at the blob), inflated in the ac/ entry alone, inflated in both entries
// to 3 GiB, or inflated by one byte in both (refused by the entry's sized binding, or,
// without one, by the blob's frame declaring its true size): each is refused with exit 4
// at once, before the blob is decoded.
func TestKeptSizesAreBound(t *testing.T) {
	if testing.Short() {
		t.Skip("computes a cell")
	}
	m, kept, entry, blob := keptFedavg(t)
	d := filepath.Base(blob)
	nameOf := func(v map[string]any) string {
		for name, o := range v["outputs"].(map[string]any) {
			if o == d {
				return name
			}
		}
		t.Fatalf("no output is %s", d)
		return ""
	}
	index := indexOf(kept, "train fedavg seed=0")
	sparse := func(k string) {
		f, err := os.Create(filepath.Join(k, "cas", d))
		if err == nil {
			err = f.Truncate(3 << 30)
			f.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		damage func(k string)
		want   string
	}{
		{"sizes deleted, 3 GiB at the blob", func(k string) {
			editJSON(t, filepath.Join(k, "ac", filepath.Base(entry)), func(v map[string]any) { delete(v, "sizes") })
			sparse(k)
		}, "records no size"},
		{"size inflated in the ac entry", func(k string) {
			editJSON(t, filepath.Join(k, "ac", filepath.Base(entry)), func(v map[string]any) {
				s := v["sizes"].(map[string]any)
				s[nameOf(v)] = s[nameOf(v)].(float64) + 1000
			})
		}, "other sizes"},
		{"size inflated to 3 GiB in both, 3 GiB at the blob", func(k string) {
			for _, p := range []string{filepath.Join(k, "ac", filepath.Base(entry)), filepath.Join(k, strings.TrimPrefix(index, kept))} {
				editJSON(t, p, func(v map[string]any) {
					if s, ok := v["sizes"].(map[string]any); ok {
						s[nameOf(v)] = 3 << 30
					}
				})
			}
			sparse(k)
		}, "more than a kept result's blob may hold"},
		{"size one byte larger in both", func(k string) {
			for _, p := range []string{filepath.Join(k, "ac", filepath.Base(entry)), filepath.Join(k, strings.TrimPrefix(index, kept))} {
				editJSON(t, p, func(v map[string]any) {
					if s, ok := v["sizes"].(map[string]any); ok {
						s[nameOf(v)] = s[nameOf(v)].(float64) + 1
					}
				})
			}
		}, "other sizes for its outputs than it was written with"},
		{"size one byte larger in both, the sized binding removed", func(k string) {
			for _, p := range []string{filepath.Join(k, "ac", filepath.Base(entry)), filepath.Join(k, strings.TrimPrefix(index, kept))} {
				editJSON(t, p, func(v map[string]any) {
					delete(v, "sized_binding") // as an entry written before it was recorded
					if s, ok := v["sizes"].(map[string]any); ok {
						s[nameOf(v)] = s[nameOf(v)].(float64) + 1
					}
				})
			}
		}, "its entry records"},
	} {
		k := filepath.Join(t.TempDir(), "kept")
		if err := os.CopyFS(k, os.DirFS(kept)); err != nil {
			t.Fatal(err)
		}
		c.damage(k)
		start := time.Now()
		code, out, errOut := reproducedWithin(t, m, "--kept", k)
		if code != exitEnvironment || !strings.Contains(errOut, c.want) || time.Since(start) > 10*time.Second {
			t.Errorf("%s: exit %d after %v, want 4 at once saying %q\n%s%s", c.name, code, time.Since(start), c.want, out, errOut)
		}
	}
}

// TestConsistentForgeryNamesBothCells: FedAvg's kept evaluation pointed at Local's blobs in
// both its ac/ entry (outputs, sizes, both bindings recomputed) and its index entry — every
// record consistent with every other — still fails `reproduced` and `pull` with exit 4
// naming both cells: Local's summary says whose it is (on 6a4df14, reproduced read Local's
// number as FedAvg's).
func TestConsistentForgeryNamesBothCells(t *testing.T) {
	if testing.Short() {
		t.Skip("computes two cells")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest+"expect:\n  - {method: fedavg, metric: final_pooled, published: 50, tolerance: 1000}\n"+
		"  - {method: local, metric: final_pooled, published: 50, tolerance: 1000}\n")
	store, kept := filepath.Join(dir, "store"), filepath.Join(dir, "kept")
	if code, _, errOut := fedpipe(t, "run", m, "--store", store, "-q"); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	if code, _, errOut := fedpipe(t, "push", m, "--store", store, "--remote", kept, "--results-only"); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	const fa, lo = "evaluate fedavg seed=0", "evaluate local seed=0"
	var local map[string]any
	b, _ := os.ReadFile(indexOf(kept, lo))
	if err := json.Unmarshal(b, &local); err != nil {
		t.Fatal(err)
	}
	var key string
	editJSON(t, indexOf(kept, fa), func(v map[string]any) {
		v["outputs"], v["sizes"], key = local["outputs"], local["sizes"], v["key"].(string)
	})
	editJSON(t, filepath.Join(kept, "ac", key), func(v map[string]any) {
		v["outputs"], v["sizes"] = local["outputs"], local["sizes"]
		outs := map[string]artifacts.Digest{}
		for name, s := range local["outputs"].(map[string]any) {
			outs[name], _ = artifacts.ParseDigest(s.(string))
		}
		k, _ := artifacts.ParseDigest(key)
		v["binding"] = artifacts.Binding(k, outs)
		// The sized binding too, as remote.sizedBinding computes it: nothing is left stale.
		h := sha256.New()
		fmt.Fprintf(h, "fedpipe-binding/2\n%s\n", k)
		names := make([]string, 0, len(outs))
		for name := range outs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			fmt.Fprintf(h, "%s\x00%s\x00%d\n", name, outs[name], int64(local["sizes"].(map[string]any)[name].(float64)))
		}
		v["sized_binding"] = hex.EncodeToString(h.Sum(nil))
	})
	code, out, errOut := reproducedWithin(t, m, "--kept", kept)
	if code != exitEnvironment || !strings.Contains(errOut, fa) || !strings.Contains(errOut, lo) {
		t.Errorf("reproduced of the forgery: exit %d, want 4 naming both cells\n%s%s", code, out, errOut)
	}
	code, _, errOut = fedpipe(t, "pull", m, "--remote", kept, "--store", filepath.Join(dir, "pulled"))
	if code != exitEnvironment || !strings.Contains(errOut, fa) || !strings.Contains(errOut, lo) {
		t.Errorf("pull of the forgery: exit %d, want 4 naming both cells\n%s", code, errOut)
	}
	if code, _, _ := fedpipe(t, "verify", m, "--store", filepath.Join(dir, "pulled")); code == 0 {
		t.Error("the refused result was written into the store anyway: verify passes")
	}
	// A run's (a worker's) fetch from the remote checks the same.
	code, _, errOut = fedpipe(t, "run", m, "--remote", kept, "--store", filepath.Join(dir, "fetched"), "--only", "fedavg", "-q")
	if code != exitEnvironment || !strings.Contains(errOut, fa) || !strings.Contains(errOut, lo) {
		t.Errorf("run fetching the forgery: exit %d, want 4 naming both cells\n%s", code, errOut)
	}
}

// TestPullInterruptedExits130: SIGTERM to a pull waiting on a remote that does not answer
// ends it with exit 130, as documented (on 6a4df14 Go's default: killed, 143).
func TestPullInterruptedExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fedpipe as a process")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	cmd := subprocess("pull", m, "--store", filepath.Join(dir, "s"), "--remote", "s3://bucket/prefix")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "FEDPIPE_REMOTE=") && !strings.HasPrefix(kv, "FEDPIPE_STORE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "FEDPIPE_TEST_MAIN=1", "AWS_ENDPOINT_URL=http://"+ln.Addr().String(), "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("pull never reached the remote:\n%s", errb.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("pull still running 30 s after SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("pull after SIGTERM: exit %d (%v), want 130 saying it was interrupted\n%s", code, cmd.ProcessState, errb.String())
	}
}

// TestPushOfDamagedLocalResult: a push whose local result has a corrupt output exits 4
// naming the result, after pushing the others (on 6a4df14: exit 1, a raw "no such file or
// directory" for the entry it had not pushed); a pull of a cell no remote holds says it
// was never computed, keeping "corrupt there" for damage.
func TestPushOfDamagedLocalResult(t *testing.T) {
	if testing.Short() {
		t.Skip("computes a cell")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	store, rem := filepath.Join(dir, "store"), filepath.Join(dir, "remote")
	r := runJSON(t, "run", m, "--store", store, "--only", "fedavg")
	var summary artifacts.Digest
	for _, s := range r.Stages {
		if s.Kind == "evaluate" {
			summary, _ = artifacts.ParseDigest(s.Outputs["summary"])
		}
	}
	if err := artifacts.FlipByte(store, summary, 3); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := fedpipe(t, "push", m, "--store", store, "--remote", rem, "--results-only", "--only", "fedavg")
	if code != exitEnvironment || !strings.Contains(errOut, "evaluate fedavg seed=0") || !strings.Contains(errOut, "damaged in the local store") ||
		strings.Contains(errOut, "no such file") {
		t.Errorf("push of a damaged result: exit %d, want 4 naming it\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "pushed 2 results") {
		t.Errorf("push did not push the intact results:\n%s", out)
	}
	code, out, errOut = fedpipe(t, "pull", m, "--store", filepath.Join(dir, "pulled"), "--remote", rem, "--only", "local")
	if code != 0 || !strings.Contains(out, "never computed") || strings.Contains(out, "corrupt") {
		t.Errorf("pull of a cell the remote never held: exit %d, want 0 saying never computed\n%s%s", code, out, errOut)
	}
}
