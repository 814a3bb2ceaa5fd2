package partition

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/data"
)

// The expected partitions below are numpy 1.24.2's: FL-bench's partition steps
// (DirichletFLBench's comment) restated in Python over np.random and run once; they are
// numpy's draws, not fedpipe's output.

func TestDirichletFLBenchSmall(t *testing.T) {
	labels := make([]int32, 60)
	for i := range labels {
		labels[i] = int32((i*7 + i/5) % 3)
	}
	train, test, err := DirichletFLBench(labels, 3, 4, 0.5, 3, 0.25, 42)
	if err != nil {
		t.Fatal(err)
	}
	wantTrain := [][]int{{1, 20, 12}, {22, 33, 28, 23, 2, 57, 14, 32, 0},
		{37, 24, 39, 58, 19, 59, 13, 18, 55, 56, 26, 43, 10, 50, 38, 53, 52, 5},
		{42, 44, 49, 7, 17, 21, 11, 27, 4, 16, 47, 35, 15, 29, 46, 41}}
	wantTest := [][]int{{40}, {3, 45}, {25, 8, 51, 34, 31, 30}, {6, 36, 48, 9, 54}}
	if !reflect.DeepEqual(train, wantTrain) || !reflect.DeepEqual(test, wantTest) {
		t.Errorf("train %v\ntest %v\nwant numpy's train %v\ntest %v", train, test, wantTrain, wantTest)
	}
	if _, _, err := DirichletFLBench(labels, 3, 4, 0.5, 3, 0.25, -1); err == nil {
		t.Error("a negative seed was accepted (numpy refuses it)")
	}
	// Clients of one sample cannot train and test.
	if _, _, err := DirichletFLBench(labels, 3, 30, 0.5, 0, 0.25, 42); err == nil || !strings.Contains(err.Error(), "min_samples") {
		t.Errorf("one-sample clients: %v, want an error naming min_samples", err)
	}
}

// flbenchDigests deals labels (training then test images, as FL-bench pools them) to 100
// clients at each α, min 10 samples, test ratio 0.25, seed 42 (FedOBP Table 6's settings),
// and compares the SHA-256 of the partition written as Python's json.dumps writes
// [[train, test], …] with numpy's.
func flbenchDigests(t *testing.T, labels []int32, want map[float64]string) {
	t.Helper()
	for alpha, digest := range want {
		train, test, err := DirichletFLBench(labels, 10, 100, alpha, 10, 0.25, 42)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		list := func(x []int) string { return strings.Join(strings.Fields(fmt.Sprint(x)), ", ") }
		b.WriteString("[")
		for i := range train {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "[%s, %s]", list(train[i]), list(test[i]))
		}
		b.WriteString("]")
		sum := sha256.Sum256([]byte(b.String()))
		if got := hex.EncodeToString(sum[:]); got != digest {
			t.Errorf("α %g: partition digest %s, numpy's %s", alpha, got, digest)
		}
	}
}

// FedOBP Table 6's FMNIST partitions are FL-bench's, sample for sample.
func TestDirichletFLBenchFashionMNIST(t *testing.T) {
	if _, err := os.Stat(filepath.Join(data.FMNISTSystemDir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skip("Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)")
	}
	ds, err := data.LoadFashionMNIST(data.FMNISTSystemDir)
	if err != nil {
		t.Fatal(err)
	}
	flbenchDigests(t, ds.Y, map[float64]string{
		0.1: "178c9d7dabcb721ac2722091bf66516a4930516f61d037b033449a11ae7d055d",
		0.5: "5d8775e195542fe77b51a014138097d937127a9cc24cd56f0bfc8281d8e6e83b",
	})
}

// FedOBP Table 6's MNIST partitions are FL-bench's, sample for sample: the digests are
// numpy 1.24.2's (Debian python3-numpy), from the same restatement of FL-bench's draws
// that gives the FMNIST digests above, run on the MNIST files make data installs
// (2026-11-27).
func TestDirichletFLBenchMNIST(t *testing.T) {
	dir := filepath.Join(data.UserDataDir(), "mnist")
	if _, err := os.Stat(filepath.Join(dir, "train-labels-idx1-ubyte.gz")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("MNIST not installed in %s under CI (make data installs it)", dir)
		}
		t.Skip("MNIST not installed (make data)")
	}
	ds, err := data.LoadMNIST(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	flbenchDigests(t, ds.Y, map[float64]string{
		0.1: "d464e1783f3096058d9e5e426bad19c8c2f606fa5649f8a93267198f3bc01324",
		0.5: "c37d4c5552c82b75bc28a5ab807747767699e281e3313fa7dc8819503b409637",
	})
}

// Make with draw flbench deals what DirichletFLBench deals over the pool that
// dataset.fraction keeps, translated to dataset positions, and differs from fedpipe's own
// draw.
func TestMakeDrawFLBench(t *testing.T) {
	n := 600
	ds := &data.Dataset{Name: "t", Shape: []int{1}, Classes: 3, X: make([]float32, n), Y: make([]int32, n)}
	for i := range ds.Y {
		ds.Y[i] = int32((i*7 + i/5) % 3)
	}
	spec := manifest.DatasetSpec{Fraction: 0.5}
	p := manifest.PartitionSpec{Scheme: "dirichlet", Clients: 5, Alpha: 0.3, MinSamples: 8, TestFraction: 0.25,
		BalanceCap: "false", TestRounding: "floor", Draw: "flbench"}
	a, err := Make(ds, spec, p, 42)
	if err != nil {
		t.Fatal(err)
	}
	pool := Fraction(n, 0.5, 42)
	labels := make([]int32, len(pool))
	for i, s := range pool {
		labels[i] = ds.Y[s]
	}
	train, test, err := DirichletFLBench(labels, 3, 5, 0.3, 8, 0.25, 42)
	if err != nil {
		t.Fatal(err)
	}
	for c := range train {
		for i, s := range train[c] {
			train[c][i] = pool[s]
		}
		for i, s := range test[c] {
			test[c][i] = pool[s]
		}
	}
	if !reflect.DeepEqual(a.Train, train) || !reflect.DeepEqual(a.Test, test) {
		t.Error("Make with draw flbench differs from DirichletFLBench over the pool")
	}
	p.Draw = ""
	if own, err := Make(ds, spec, p, 42); err != nil || reflect.DeepEqual(own.Train, a.Train) {
		t.Errorf("fedpipe's draw gave FL-bench's partition (or failed: %v)", err)
	}
}
