package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/train"
	"github.com/fedpipe/fedpipe/verify/audit"
)

// keptBody is tinyManifest with one seed and published cells for both methods.
var keptBody = tinyManifest + "expect:\n  - {method: fedavg, metric: final_pooled, published: 50, tolerance: 1000}\n" +
	"  - {method: local, metric: final_pooled, published: 50, tolerance: 1000}\n"

// keptEntryKey is the key an index entry of the kept directory names.
func keptEntryKey(t *testing.T, path string) artifacts.Digest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Key string }
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	d, err := artifacts.ParseDigest(e.Key)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The evidence rules for a kept result of a backend other than the reference one (here
// fpcpu, the reference CPU backend, standing in for a GPU: its rounding differs from
// fpfast's): the push keeps it beside fpfast's result of the same cell, in its own index
// entry, fpfast's untouched; it counts in `fedpipe reproduced`, whose verdict names the
// backend it reads, and the page's "how it was made" names the backend id; it is stale
// when the settings change; the audit recomputes it bit for bit on fpcpu, which is here,
// or says why not when the backend is missing; and it passes the cross-backend check (round
// 1 on fpfast against its kept sketch), which a mutant (its sketch of one tensor scaled by
// 1.01) fails.
func TestKeptResultOfAnotherBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, keptBody)
	kept := filepath.Join(dir, "kept")
	plain := filepath.Join(kept, "cells", "tiny", "train%20fedavg%20seed=0.json")
	other := filepath.Join(kept, "cells", "tiny", "fpcpu", "train%20fedavg%20seed=0.json")
	store := func(backend string) string { return filepath.Join(dir, "store-"+backend) }
	train1 := func(backend string) {
		t.Helper()
		if code, _, errOut := fedpipe(t, "run", m, "--store", store(backend), "--backend", backend, "--only", "fedavg", "-q"); code != 0 {
			t.Fatalf("run on %s: %s", backend, errOut)
		}
	}
	push := func(backend, into string) {
		t.Helper()
		if code, _, errOut := fedpipe(t, "push", m, "--store", store(backend), "--backend", backend, "--remote", into,
			"--only", "fedavg", "--results-only"); code != 0 {
			t.Fatalf("push of %s's result: exit %d %s", backend, code, errOut)
		}
	}
	reproduced := func(into string, args ...string) (int, reproducedOut) {
		t.Helper()
		code, out, errOut := fedpipe(t, append([]string{"reproduced", m, "--kept", into, "--json"}, args...)...)
		var r reproducedOut
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("reproduced %v: exit %d, %v\n%s%s", args, code, err, out, errOut)
		}
		return code, r
	}
	train1("fpcpu")
	push("fpcpu", kept)
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("fpcpu's result has no index entry of its own: %v", err)
	}
	if _, err := os.Stat(plain); err == nil {
		t.Fatal("fpcpu's result took the plain (fpfast) index entry")
	}

	// It counts, and the verdict says whose result it reads.
	code, r := reproduced(kept)
	fa := r.Manifests[0].Cells[0]
	if code != 0 || fa.Verdict != "pass" || fa.KeptOn != "fpcpu" || r.Summary != "1 of 2 published cells reproduced at paper scale (0 stale, 1 not computed)" {
		t.Fatalf("fpcpu's kept result: exit %d, cell %+v, %q; want reproduced on fpcpu, counted", code, fa, r.Summary)
	}
	page := filepath.Join(dir, "page.md")
	if code, _, errOut := fedpipe(t, "reproduced", m, "--kept", kept, "--page", page); code != 0 {
		t.Fatalf("--page: %d %s", code, errOut)
	}
	text, _ := os.ReadFile(page)
	row := ""
	for _, l := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(l, "| fedavg |") {
			row = l
		}
	}
	if !strings.Contains(row, "reproduced (the fpcpu result)") || !strings.Contains(row, model.BackendID(model.OracleBackend)) {
		t.Errorf("the page's fedavg row names not the backend in its verdict and its how-it-was-made:\n%s", row)
	}
	// Stale when the settings change, not because fpfast is this machine's backend.
	if _, r := reproduced(kept, "-S", "train.lr=0.07"); r.Manifests[0].Cells[0].Verdict != "stale" ||
		!strings.Contains(r.Manifests[0].Cells[0].StaleWhy, "lr") {
		t.Errorf("fpcpu's result after a change of lr: %+v, want stale naming lr", r.Manifests[0].Cells[0])
	}

	// Audited bit for bit on fpcpu, which is here, and cross-checked on fpfast.
	code, out, errOut := fedpipe(t, "reproduced", m, "--kept", kept, "--audit", "2")
	if code != 0 || !strings.Contains(out, "1 reproduce their fingerprints") ||
		!strings.Contains(out, "1 of 1 made on other backends pass the cross-backend check") || !strings.Contains(out, "(made on fpcpu)") {
		t.Errorf("audit of fpcpu's result: exit %d\n%s%s", code, out, errOut)
	}
	// On a machine without the backend: not audited bit for bit, saying why; the
	// cross-backend check stands in.
	audit.BackendHere = func(id string) (string, string) { return "", "made on fpcpu, which this machine lacks" }
	code, out, errOut = fedpipe(t, "reproduced", m, "--kept", kept, "--audit", "2")
	audit.BackendHere = model.BackendHere
	if code != 0 || !strings.Contains(out, "not audited bit for bit: made on fpcpu, which this machine lacks") ||
		!strings.Contains(out, "0 reproduce their fingerprints") || !strings.Contains(out, "cross-backend check: pass") {
		t.Errorf("audit of a backend this machine lacks: exit %d\n%s%s", code, out, errOut)
	}

	// fpfast's result of the same cell is kept beside it; the verdict reads fpfast's and
	// names the other.
	train1("fpfast")
	before, _ := os.ReadFile(other)
	push("fpfast", kept)
	if after, _ := os.ReadFile(other); string(after) != string(before) {
		t.Error("pushing fpfast's result changed fpcpu's index entry")
	}
	if b, err := os.ReadFile(plain); err != nil || !strings.Contains(string(b), "fpfast@") {
		t.Fatalf("fpfast's entry: %v\n%s", err, b)
	}
	_, r = reproduced(kept)
	if fa := r.Manifests[0].Cells[0]; fa.Verdict != "pass" || fa.KeptOn != "fpfast" || len(fa.KeptOthers) != 1 || fa.KeptOthers[0] != "fpcpu: reproduced" {
		t.Errorf("both kept: %+v; want fpfast's read, fpcpu's named", fa)
	}
	// Read with --backend fpcpu, the verdict reads fpcpu's and names fpfast's.
	_, r = reproduced(kept, "--backend", "fpcpu")
	if fa := r.Manifests[0].Cells[0]; fa.Verdict != "pass" || fa.KeptOn != "fpcpu" || len(fa.KeptOthers) != 1 || fa.KeptOthers[0] != "fpfast: reproduced" {
		t.Errorf("both kept, read with --backend fpcpu: %+v; want fpcpu's read, fpfast's named", fa)
	}

	// A mutant: fpcpu's result with its sketch of one tensor scaled by 1.01.
	key := keptEntryKey(t, other)
	s, err := artifacts.Open(store("fpcpu"), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, ok, err := s.GetAction(key)
	if err != nil || !ok {
		t.Fatalf("fpcpu's train result in its store: %v %v", ok, err)
	}
	b, err := s.Get(a.Outputs[results.OutTrainSketch])
	if err != nil {
		t.Fatal(err)
	}
	sk, err := train.DecodeSketch(b)
	if err != nil {
		t.Fatal(err)
	}
	tz := &sk.Tensors[0]
	tz.Norm *= 1.01
	for k := range tz.Proj {
		tz.Proj[k] *= 1.01
	}
	b, _ = train.EncodeSketch(sk)
	d, err := s.Put(b)
	if err != nil {
		t.Fatal(err)
	}
	genuine := a.Outputs[results.OutTrainSketch]
	a.Outputs[results.OutTrainSketch] = d
	if err := s.PutAction(key, a); err != nil {
		t.Fatal(err)
	}
	s.Close()
	mutant := filepath.Join(dir, "mutant")
	push("fpcpu", mutant)
	code, out, errOut = fedpipe(t, "reproduced", m, "--kept", mutant, "--audit", "2")
	if code != exitMismatch || !strings.Contains(out, "cross-backend check: fail") || !strings.Contains(out, "0 of 1 made on other backends pass") {
		t.Errorf("audit of a mutant: exit %d, want %d\n%s%s", code, exitMismatch, out, errOut)
	}

	// A result that keeps no sketch (made before sketches were kept), of a backend this
	// machine lacks: nothing can check it, and the audit says so and fails.
	if s, err = artifacts.Open(store("fpcpu"), artifacts.Options{}); err != nil {
		t.Fatal(err)
	}
	delete(a.Outputs, results.OutTrainSketch)
	if err := s.PutAction(key, a); err != nil {
		t.Fatal(err)
	}
	s.Close()
	old := filepath.Join(dir, "old")
	push("fpcpu", old)
	audit.BackendHere = func(id string) (string, string) { return "", "made on fpcpu, which this machine lacks" }
	code, out, errOut = fedpipe(t, "reproduced", m, "--kept", old, "--audit", "2")
	audit.BackendHere = model.BackendHere
	if code != exitMismatch || !strings.Contains(out, "| unchecked |") || !strings.Contains(out, "cross-backend check: no sketch kept") {
		t.Errorf("audit of a result without a sketch on a backend not here: exit %d, want %d\n%s%s", code, exitMismatch, out, errOut)
	}
	if genuine == d {
		t.Error("the mutant's sketch has the genuine one's digest")
	}
}
