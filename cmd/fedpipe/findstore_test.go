package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
)

// projectManifest runs in about a second: two methods, three rounds.
const projectManifest = `name: tiny
seeds: [0]
dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 6}
partition: {scheme: natural, test_fraction: 0.25}
model: {arch: mlp, hidden: [8]}
train: {rounds: 3, participation: 0.5, local_epochs: 1, batch_size: 16, lr: 0.05}
methods:
  - name: fedavg
  - name: local
expect:
  - {method: local, metric: final_pooled, published: 50, tolerance: 50}
`

// project makes a git-like project: root/.git and root/manifests/tiny.yaml. It returns
// the root and the manifest's absolute path.
func project(t *testing.T) (string, string) {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(root, "manifests", "tiny.yaml")
	if err := os.WriteFile(m, []byte(projectManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, m
}

// emptyStore creates an empty store in dir.
func emptyStore(t *testing.T, dir string) {
	t.Helper()
	s, err := artifacts.Open(dir, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func runIn(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// readOnly are the commands that only read a store, each with its arguments for manifest m.
func readOnly(m string) [][]string {
	return [][]string{
		{"status", m}, {"ls", m}, {"diff", m + "#fedavg", m + "#local"}, {"show", m},
		{"report", m, "-o", filepath.Join(filepath.Dir(m), "..", "out")}, {"export", m, "-o", filepath.Join(filepath.Dir(m), "..", "exp")},
		{"verify", m},
	}
}

// From an unrelated directory with no store anywhere, every read-only command exits 2
// saying no store was found and how to point at one, and no .fedpipe appears.
func TestReadOnlyCommandsNeverCreateAStore(t *testing.T) {
	t.Setenv(artifacts.EnvStore, "")
	root, m := project(t)
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	for _, args := range readOnly(m) {
		code, _, errs := runIn(t, args...)
		if code != exitInvalid || !strings.Contains(errs, "no fedpipe store found") || !strings.Contains(errs, "--store DIR") ||
			!strings.Contains(errs, filepath.Join(elsewhere, ".fedpipe")) || !strings.Contains(errs, filepath.Join(root, ".fedpipe")) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming where it looked and --store", args, code, errs)
		}
		for _, d := range []string{elsewhere, root, filepath.Dir(m)} {
			if _, err := os.Stat(filepath.Join(d, ".fedpipe")); err == nil {
				t.Fatalf("%v created %s/.fedpipe", args, d)
			}
		}
	}
	// An explicit store that does not exist is not created either.
	missing := filepath.Join(elsewhere, "nowhere")
	if code, _, errs := runIn(t, "ls", m, "--store", missing); code != exitInvalid || !strings.Contains(errs, missing) {
		t.Errorf("ls --store %s: exit %d, %q", missing, code, errs)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("ls created the --store directory")
	}
	// Nor does gc: there is nothing to remove.
	if code, out, errs := runIn(t, "gc", m); code != exitOK || !strings.Contains(out, "no store at") {
		t.Errorf("gc without a store: exit %d\n%s%s", code, out, errs)
	}
	// A dry run creates none either.
	if code, out, errs := runIn(t, "run", m, "--dry-run"); code != exitOK || !strings.Contains(out, "would run") {
		t.Errorf("run --dry-run: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, ".fedpipe")); err == nil {
		t.Errorf("run --dry-run created a store")
	}
}

// A store made at the project's root by `run` is found from an unrelated directory by
// the manifest's path, named on stderr, and a later run from there writes to it.
func TestReadOnlyCommandsFindTheProjectStore(t *testing.T) {
	t.Setenv(artifacts.EnvStore, "")
	root, m := project(t)
	t.Chdir(root)
	if code, out, errs := runIn(t, "run", m); code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	store := filepath.Join(root, ".fedpipe")
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	code, out, errs := runIn(t, "ls", m)
	if code != exitOK || !strings.Contains(errs, "reading store "+store) || !strings.Contains(out, "2 runs: 2 cached") {
		t.Errorf("ls from elsewhere: exit %d\nstdout %s\nstderr %s\nwant both runs cached, read from %s", code, out, errs, store)
	}
	for _, args := range readOnly(m) {
		if code, out, errs := runIn(t, args...); code != exitOK || !strings.Contains(errs, store) {
			t.Errorf("%v: exit %d, want 0 naming %s\n%s%s", args, code, store, out, errs)
		}
	}
	// run from elsewhere finds the same store: everything cached.
	if code, out, errs := runIn(t, "run", m); code != exitOK || !strings.Contains(out, "0 of") || !strings.Contains(out, store) {
		t.Errorf("run from elsewhere: exit %d, want nothing run in %s\n%s%s", code, store, out, errs)
	}
	// gc tidies the store run and ls use, not an empty one here.
	if code, out, errs := runIn(t, "gc", m, "--dry-run"); code != exitOK || strings.Contains(out, "no store at") {
		t.Errorf("gc --dry-run from elsewhere: exit %d, want the project's store\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, ".fedpipe")); err == nil {
		t.Errorf("a command created %s/.fedpipe", elsewhere)
	}
	// $FEDPIPE_STORE names the store outright: one holding none is an error, not a fallback.
	t.Setenv(artifacts.EnvStore, filepath.Join(elsewhere, "env"))
	if code, _, errs := runIn(t, "ls", m); code != exitInvalid || !strings.Contains(errs, "$FEDPIPE_STORE") {
		t.Errorf("ls with an empty $FEDPIPE_STORE: exit %d, %q", code, errs)
	}
}

// status calls a stage that never ran "missing", and one that ran with other settings
// "stale".
func TestStatusNeverRanIsMissingNotStale(t *testing.T) {
	_, m := project(t)
	store := filepath.Join(t.TempDir(), "s")
	if code, out, errs := runIn(t, "run", m, "--store", store, "--only", "fedavg"); code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ := runIn(t, "status", m, "--store", store, "-S", "train.lr=0.1")
	var stale, missing int
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "stale ") && strings.Contains(l, "train fedavg"):
			stale++
		case strings.HasPrefix(l, "missing ") && strings.Contains(l, "train local"):
			missing++
		case strings.HasPrefix(l, "stale ") && strings.Contains(l, "never ran"):
			t.Errorf("a stage that never ran is called stale: %s", l)
		}
	}
	if code != exitOK || stale != 1 || missing != 1 {
		t.Errorf("status: exit %d, %d stale fedavg trains and %d missing local trains, want 1 and 1\n%s", code, stale, missing, out)
	}
}
