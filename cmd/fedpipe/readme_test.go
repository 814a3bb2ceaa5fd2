package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/storedir"
	"github.com/fedpipe/fedpipe/launch"
)

// readmeBlock returns the first ```sh block after the heading in README.md.
func readmeBlock(t *testing.T, readme, heading string) string {
	t.Helper()
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no heading %q", heading)
	}
	rest := readme[i:]
	j := strings.Index(rest, "\n```sh\n")
	if j < 0 {
		t.Fatalf("README.md: no ```sh block after %q", heading)
	}
	rest = rest[j+len("\n```sh\n"):]
	k := strings.Index(rest, "\n```")
	if k < 0 {
		t.Fatalf("README.md: the block after %q is not closed", heading)
	}
	return rest[:k+1]
}

// pathWithoutFedpipe is $PATH less every directory holding a fedpipe, so that only what
// the README says makes the shell find one.
func pathWithoutFedpipe() string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "fedpipe")); err != nil {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// TestReadmeRunsAsPasted runs README.md's command lines in bash as a new shell would, from
// a temporary copy of the repository's manifests: the "Two commands" block (its `make`
// lines stand for what `make run` leaves, bin/fedpipe, which is this test binary acting as
// fedpipe) and then the "A day in the life" block, each line as written, stopping at the
// first that fails. The PATH it starts with holds no fedpipe: the README itself must say
// how the shell finds it.
func TestReadmeRunsAsPasted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's sweep: about a minute")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	two, day := readmeBlock(t, readme, "## Two commands"), readmeBlock(t, readme, "## A day in the life")

	dir := t.TempDir()
	for _, d := range []string{"bin", "manifests"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	q, err := os.ReadFile(filepath.Join("..", "..", "manifests", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests", "quickstart.yaml"), q, 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\nFEDPIPE_TEST_MAIN=1 exec " + launch.ShellQuote(self) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "fedpipe"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}

	script := "set -eo pipefail\n"
	for _, l := range strings.Split(two, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "make ") {
			script += l + "\n"
		}
	}
	script += day
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "FEDPIPE_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PATH="+pathWithoutFedpipe(), "CI=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's lines, pasted into bash in %s, failed: %v\nscript:\n%s\noutput:\n%s", dir, err, script, out)
	}
	// What they say they do: a row per run of the 3×3 sweep, the extension resumed, a report.
	for _, want := range []string{"18 runs: 18 cached", "lr=0.01", "lr=0.1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the README's lines printed no %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "index.html")); err != nil {
		t.Errorf("fedpipe report … -o out/ wrote no out/index.html: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".fedpipe", storedir.Marker)); err != nil {
		t.Errorf("no store in the working directory: %v", err)
	}
}

// The README's example manifest is the real file, byte for byte.
func TestReadmeManifestIsTheRealFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.ReadFile(filepath.Join("..", "..", "manifests", "fmnist-smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "`manifests/fmnist-smoke.yaml`") || !strings.Contains(string(b), "```yaml\n"+string(f)+"```\n") {
		t.Errorf("README.md's example manifest is not manifests/fmnist-smoke.yaml as it is")
	}
}
