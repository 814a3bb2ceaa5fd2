package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeptResultsBoundToTheirCells: kept results of FedAvg and Local, then, each on a fresh
// copy of the kept directory, the ways one cell's evidence can be made to read as another's —
// its ac/ entry replaced by Local's, its entry's outputs pointed at Local's blobs, its index
// file replaced by Local's, an index entry that binds no outputs — each fail `reproduced`
// with exit 4 naming both cells (where there are two), instead of reporting Local's number
// as FedAvg's; and a pull of a swapped entry from the directory exits 4 too.
func TestKeptResultsBoundToTheirCells(t *testing.T) {
	dir := t.TempDir()
	body := tinyManifest + "expect:\n  - {method: fedavg, metric: final_pooled, published: 50, tolerance: 1000}\n" +
		"  - {method: local, metric: final_pooled, published: 50, tolerance: 1000}\n"
	m := writeManifest(t, dir, body)
	store, kept := filepath.Join(dir, "store"), filepath.Join(dir, "kept")
	if code, _, errOut := fedpipe(t, "run", m, "--store", store, "-q"); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	if code, _, errOut := fedpipe(t, "push", m, "--store", store, "--remote", kept, "--results-only"); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	if code, out, errOut := fedpipe(t, "reproduced", m, "--kept", kept); code != 0 || !strings.Contains(out, "2 of 2") {
		t.Fatalf("the kept results as pushed: exit %d\n%s%s", code, out, errOut)
	}
	index := func(k, stage string) string {
		return filepath.Join(k, "cells", "tiny", strings.ReplaceAll(stage, " ", "%20")+".json")
	}
	keyOf := func(k, stage string) string {
		b, err := os.ReadFile(index(k, stage))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Key     string            `json:"key"`
			Outputs map[string]string `json:"outputs"`
		}
		if err := json.Unmarshal(b, &e); err != nil || e.Key == "" {
			t.Fatalf("index entry of %s: %v, outputs %v", stage, err, e.Outputs)
		}
		return e.Key
	}
	fresh := func(name string) string {
		k := filepath.Join(dir, name)
		if err := os.CopyFS(k, os.DirFS(kept)); err != nil {
			t.Fatal(err)
		}
		return k
	}
	const fa, lo = "evaluate fedavg seed=0", "evaluate local seed=0"
	entry := func(k, stage string) string { return filepath.Join(k, "ac", keyOf(k, stage)) }
	for _, c := range []struct {
		name   string
		damage func(k string)
		want   []string
	}{
		{"entry replaced by Local's", func(k string) {
			b, _ := os.ReadFile(entry(k, lo))
			os.WriteFile(entry(k, fa), b, 0o644)
		}, []string{fa, lo}},
		{"outputs pointed at Local's blobs", func(k string) {
			var a, b map[string]any
			ra, _ := os.ReadFile(entry(k, fa))
			rb, _ := os.ReadFile(entry(k, lo))
			json.Unmarshal(ra, &a)
			json.Unmarshal(rb, &b)
			a["outputs"], a["sizes"] = b["outputs"], b["sizes"]
			out, _ := json.Marshal(a)
			os.WriteFile(entry(k, fa), out, 0o644)
		}, []string{fa, lo}},
		{"index file replaced by Local's", func(k string) {
			b, _ := os.ReadFile(index(k, lo))
			os.WriteFile(index(k, fa), b, 0o644)
		}, []string{fa, lo, "swapped index file"}},
		{"index entry binding no outputs", func(k string) {
			var e map[string]any
			b, _ := os.ReadFile(index(k, fa))
			json.Unmarshal(b, &e)
			delete(e, "outputs")
			out, _ := json.Marshal(e)
			os.WriteFile(index(k, fa), out, 0o644)
		}, []string{fa, "binds no outputs", "--bind"}},
	} {
		k := fresh(strings.ReplaceAll(c.name, " ", "-"))
		c.damage(k)
		code, out, errOut := fedpipe(t, "reproduced", m, "--kept", k)
		if code != exitEnvironment {
			t.Errorf("%s: exit %d, want 4\n%s%s", c.name, code, out, errOut)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: the error does not name %q:\n%s", c.name, w, errOut)
			}
		}
	}

	// Any remote: an entry copied under another key is refused by a pull (its binding).
	k := fresh("pull-swapped")
	b, _ := os.ReadFile(entry(k, lo))
	os.WriteFile(entry(k, fa), b, 0o644)
	code, _, errOut := fedpipe(t, "pull", m, "--remote", k, "--store", filepath.Join(dir, "pulled"))
	if code != exitEnvironment || !strings.Contains(errOut, "not the entry of result") || !strings.Contains(errOut, lo) {
		t.Errorf("pull of a swapped entry: exit %d, want 4 naming the stage it holds\n%s", code, errOut)
	}
}
