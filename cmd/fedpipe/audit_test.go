package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/train"
	"github.com/fedpipe/fedpipe/verify/audit"
)

type auditOut struct {
	Kept    int          `json:"kept"`
	Audited int          `json:"audited"`
	Passed  int          `json:"passed"`
	Cells   []audit.Cell `json:"cells"`
}

func auditJSON(t *testing.T, wantCode int, args ...string) auditOut {
	t.Helper()
	code, out, errs := fedpipe(t, append(args, "--json")...)
	var a auditOut
	if code != wantCode || json.Unmarshal([]byte(out), &a) != nil {
		t.Fatalf("fedpipe %v: exit %d, want %d\n%s%s", args, code, wantCode, out, errs)
	}
	return a
}

func verdicts(a auditOut) map[string]string {
	m := map[string]string{}
	for _, c := range a.Cells {
		m[c.Cell] = c.Verdict
	}
	return m
}

// editAction rewrites train stage key's result in the store through the artifacts API:
// edit gets its fingerprints output (nil: none) and returns the new one (nil: drop it).
func editAction(t *testing.T, dir, key string, edit func([]byte) []byte) {
	t.Helper()
	s, err := artifacts.Open(dir, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k, err := artifacts.ParseDigest(key)
	if err != nil {
		t.Fatal(err)
	}
	a, ok, err := s.GetAction(k)
	if err != nil || !ok {
		t.Fatalf("no action %s (%v)", key, err)
	}
	var old []byte
	if d, ok := a.Outputs[results.OutTrainFingerprints]; ok {
		if old, err = s.Get(d); err != nil {
			t.Fatal(err)
		}
	}
	b := edit(old)
	delete(a.Outputs, results.OutTrainFingerprints)
	if b != nil {
		if a.Outputs[results.OutTrainFingerprints], err = s.Put(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutAction(k, a); err != nil {
		t.Fatal(err)
	}
}

// TestAudit: verify --audit N recomputes the first N rounds of kept train results and
// compares fingerprints. An honest store passes (also with N beyond the run's rounds, and
// for a seeded sample); a recorded fingerprint edited in the store fails at its round,
// naming both digests, while an audit that stops before that round still passes; a
// fingerprints blob whose bytes were edited is refused by its digest; a result without
// fingerprints is reported as such. Every non-pass exits 3.
func TestAudit(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	res := runJSON(t, "run", m, "--store", store)
	trainKey := map[string]string{}
	fpDigest := map[string]string{}
	for _, s := range res.Stages {
		if s.Kind == "train" {
			trainKey[s.Name], fpDigest[s.Name] = s.Key, s.Outputs[results.OutTrainFingerprints]
		}
	}
	const local, fedavg = "train local seed=0", "train fedavg seed=0"
	if len(trainKey) != 2 || fpDigest[local] == "" || fpDigest[fedavg] == "" {
		t.Fatalf("train stages and their fingerprints: %v %v", trainKey, fpDigest)
	}

	a := auditJSON(t, 0, "verify", m, "--store", store, "--audit", "2")
	if a.Kept != 2 || a.Audited != 2 || a.Passed != 2 || a.Cells[0].Rounds != 2 || a.Cells[0].Provenance == nil {
		t.Fatalf("honest audit: %+v", a)
	}
	if a = auditJSON(t, 0, "verify", m, "--store", store, "--audit", "9"); a.Passed != 2 || a.Cells[1].Rounds != 4 {
		t.Errorf("audit beyond the run's 4 rounds: %+v", a)
	}
	s1 := auditJSON(t, 0, "verify", m, "--store", store, "--audit", "1", "--audit-sample", "1", "--audit-seed", "7")
	s2 := auditJSON(t, 0, "verify", m, "--store", store, "--audit", "1", "--audit-sample", "1", "--audit-seed", "7")
	if s1.Audited != 1 || s1.Kept != 2 || s2.Cells[0].Cell != s1.Cells[0].Cell {
		t.Errorf("seeded samples: %+v, %+v", s1, s2)
	}

	// Edit local's round-2 fingerprint (one byte of its digest) as a forger would: a new
	// blob, a rewritten entry, every digest in the store consistent.
	var original, forged string
	editAction(t, store, trainKey[local], func(b []byte) []byte {
		fs, err := train.DecodeFingerprints(b)
		if err != nil || len(fs) != 4 {
			t.Fatalf("recorded fingerprints %v (%v)", fs, err)
		}
		original = fs[1].Hex()
		fs[1].Digest[5] ^= 0x01
		forged = fs[1].Hex()
		return train.EncodeFingerprints(fs)
	})
	a = auditJSON(t, 3, "verify", m, "--store", store, "--audit", "3")
	for _, c := range a.Cells {
		switch c.Cell {
		case local:
			if c.Verdict != "fail" || c.Round != 2 || c.Recorded != forged || c.Recomputed != original {
				t.Errorf("forged fingerprint: %+v, want a failure at round 2 recorded %s recomputed %s", c, forged, original)
			}
		case fedavg:
			if c.Verdict != "pass" {
				t.Errorf("fedavg: %+v", c)
			}
		}
	}
	code, out, _ := fedpipe(t, "verify", m, "--store", store, "--audit", "3")
	if code != 3 || !strings.Contains(out, local) || !strings.Contains(out, "round 2") || !strings.Contains(out, forged) || !strings.Contains(out, original) {
		t.Errorf("text audit of the forgery: exit %d\n%s", code, out)
	}
	if a = auditJSON(t, 0, "verify", m, "--store", store, "--audit", "1"); a.Passed != 2 {
		t.Errorf("round 1 is untouched, yet: %+v", a)
	}

	// fedavg's fingerprints blob edited in place: the store's digest check refuses it.
	d, err := artifacts.ParseDigest(fpDigest[fedavg])
	if err != nil {
		t.Fatal(err)
	}
	if err := artifacts.FlipByte(store, d, 3); err != nil {
		t.Fatal(err)
	}
	// local without fingerprints, as a result of an older fedpipe.
	editAction(t, store, trainKey[local], func([]byte) []byte { return nil })
	a = auditJSON(t, 3, "verify", m, "--store", store, "--audit", "1")
	if v := verdicts(a); v[fedavg] != "corrupt" || v[local] != "no fingerprints" || a.Passed != 0 {
		t.Errorf("corrupt blob and missing fingerprints: %v", v)
	}

	if code, _, _ := fedpipe(t, "verify", m, "--store", store, "--audit-sample", "1"); code != exitInvalid {
		t.Errorf("--audit-sample without --audit: exit %d", code)
	}
}

// A run whose partition is drawn with partition.seed (held across training seeds) is
// audited on that partition: drawing it with the training seed, as the audit first did,
// recomputed other clients and failed an honest result at round 1.
func TestAuditUsesThePartitionSeed(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, strings.Replace(tinyManifest, "partition: {scheme: natural}", "partition: {scheme: natural, seed: 42}", 1))
	runJSON(t, "run", m, "--store", store)
	if a := auditJSON(t, 0, "verify", m, "--store", store, "--audit", "2"); a.Audited != 2 || a.Passed != 2 {
		t.Errorf("honest audit with partition.seed: %+v", a)
	}
}
