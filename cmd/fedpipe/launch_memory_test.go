package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/launch"
	"github.com/fedpipe/fedpipe/manifest"
)

// Without --memory, a worker gets the largest cell's estimate times launch.CellMemoryFactor in
// whole GiB (at least launch.MinWorkerMemory), and the job says how that was derived; --memory
// overrides it and the note goes.
func TestLaunchersDefaultMemoryFitsTheLargestCell(t *testing.T) {
	// 100 clients of a 4-layer CNN on FMNIST beside a 10-client run: the large one decides.
	big := `name: mem
dataset: {name: fmnist}
partition: {scheme: dirichlet, clients: 100, alpha: 0.1}
model: {arch: cnn4}
train: {rounds: 2}
grid: {partition.clients: [10, 100]}
methods: [{name: fedavg}]
`
	dir := t.TempDir()
	path := writeManifest(t, dir, big)
	m, err := manifest.LoadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	est, small := 0.0, math.Inf(1)
	for i := range runs {
		e := manifest.MemoryEstimate(&runs[i])
		est, small = max(est, e), min(small, e)
	}
	if small >= est {
		t.Fatalf("the runs' estimates do not differ (%v): the test cannot tell which one decides", est)
	}
	gib := int(math.Ceil(est * launch.CellMemoryFactor / (1 << 30)))

	code, out, errOut := fedpipe(t, "slurm", path, "--remote", "s3://lab-cache/sweeps", "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := sbatchOptions(t, out)["mem"]; got != fmt.Sprintf("%dG", gib) {
		t.Errorf("#SBATCH --mem=%s, want %dG (estimate %s × %g)", got, gib, manifest.FormatBytes(est), launch.CellMemoryFactor)
	}
	if want := fmt.Sprintf("# Memory per worker: %dGi, fedpipe's estimate for the largest cell (fedavg clients=100 seed=0, %s)", gib, manifest.FormatBytes(est)); !strings.Contains(out, want) {
		t.Errorf("script lacks %q:\n%s", want, out)
	}
	code, out, _ = fedpipe(t, "k8s", path, "--remote", "s3://lab-cache/sweeps", "--workers", "2", "--image", "img")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("memory: %dGi\n", gib)) || !strings.Contains(out, "# Memory per worker:") {
		t.Errorf("k8s exit %d, job:\n%s", code, out)
	}

	// Given --memory, it is used as is and nothing claims a derivation.
	_, out, _ = fedpipe(t, "slurm", path, "--remote", "s3://lab-cache/sweeps", "--workers", "2", "--memory", "6Gi")
	if got := sbatchOptions(t, out)["mem"]; got != "6G" || strings.Contains(out, "Memory per worker") {
		t.Errorf("with --memory 6Gi: --mem=%s\n%s", got, out)
	}

	// A tiny sweep still gets the floor.
	_, out, _ = fedpipe(t, "slurm", writeManifest(t, t.TempDir(), launchManifest), "--remote", "s3://lab-cache/sweeps", "--workers", "2")
	if got := sbatchOptions(t, out)["mem"]; got != fmt.Sprintf("%dG", launch.MinWorkerMemory>>30) {
		t.Errorf("tiny sweep: --mem=%s, want the %d GiB floor", got, launch.MinWorkerMemory>>30)
	}
}
