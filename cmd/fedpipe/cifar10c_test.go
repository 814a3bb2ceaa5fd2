package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/table"
)

// npyFile encodes a .npy (format 1.0) array.
func npyFile(descr string, shape []int, data []byte) []byte {
	var dims []string
	for _, s := range shape {
		dims = append(dims, fmt.Sprint(s))
	}
	d := strings.Join(dims, ", ")
	if len(shape) == 1 {
		d += ","
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, d)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	return append(append(b, h...), data...)
}

// writeTinyCIFAR10C writes CIFAR-10-C files for writeTinyCIFAR10's 20 test images:
// labels.npy (their labels, i mod 10, five times) and per corruption 5 × 20 images,
// severity s of test image j having every byte (7j + 40s) mod 256.
func writeTinyCIFAR10C(t *testing.T, dir string, corruptions ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var lab []byte
	for i := 0; i < 100; i++ {
		lab = binary.LittleEndian.AppendUint64(lab, uint64(i%20%10))
	}
	files := map[string][]byte{"labels.npy": npyFile("<i8", []int{100}, lab)}
	for _, c := range corruptions {
		var img []byte
		for i := 0; i < 100; i++ {
			for p := 0; p < 3072; p++ {
				img = append(img, byte(7*(i%20)+40*(i/20)))
			}
		}
		files[c+".npy"] = npyFile("|u1", []int{100, 32, 32, 3}, img)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A CIFAR-10 run evaluated under real CIFAR-10-C files found through --data: every test
// sample is replaced (its own version when it came from the test split, else a same-class
// draw, as the tables count), the report and verify show the cifar10c:<name> rows, and
// changing one byte of a .npy reruns the shift stage only.
func TestCIFAR10CShiftRun(t *testing.T) {
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	writeTinyCIFAR10(t, filepath.Join(data, "cifar-10-batches-bin"))
	writeTinyCIFAR10C(t, filepath.Join(data, "CIFAR-10-C"), "fog", "gaussian_noise")
	m := filepath.Join(tmp, "m.yaml")
	os.WriteFile(m, []byte(`name: tiny-c10c
dataset: {name: cifar10}
partition: {scheme: iid, clients: 3, test_fraction: 0.5}
model: {arch: logreg}
train: {rounds: 1, batch_size: 16}
methods: [{name: fedavg}]
shift: {cifar10c: [fog, gaussian_noise], severities: [1, 5], degrees: [0]}
expect:
  - {method: fedavg, metric: final_client_mean, shift: "cifar10c:fog", level: 5, published: 0, tolerance: 1000}
`), 0o644)
	store := filepath.Join(tmp, "store")
	first := runJSON(t, "run", m, "--store", store, "--data", data, "--quiet")
	if !strings.Contains(first.Report, "Accuracy under CIFAR-10-C (the release's files)") || !strings.Contains(first.Report, "| FedAvg | gaussian_noise |") {
		t.Fatalf("report lacks the CIFAR-10-C grid:\n%s", first.Report)
	}
	out := filepath.Join(tmp, "out")
	if code, _, errs := fedpipe(t, "export", m, "--store", store, "--data", data, "-o", out, "--format", "arrow"); code != 0 {
		t.Fatal(errs)
	}
	asg, err := table.ReadFile(filepath.Join(out, "partition_seed-0", "assignment.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	testN, fromTest := map[int64]int64{}, map[int64]int64{}
	for i := 0; i < asg.NumRows(); i++ {
		if asg.Col("split").String[i] == "test" {
			c := asg.Col("client").Int64[i]
			testN[c]++
			if asg.Col("sample").Int64[i] >= 100 { // after the five 20-record training batches
				fromTest[c]++
			}
		}
	}
	cl, err := table.ReadFile(filepath.Join(out, "shift_fedavg_seed-0", "clients.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for i := 0; i < cl.NumRows(); i++ {
		kind, c := cl.Col("shift").String[i], cl.Col("client").Int64[i]
		own, drawn := cl.Col("cifar10c_own").Int64[i], cl.Col("cifar10c_drawn").Int64[i]
		if !strings.HasPrefix(kind, "cifar10c:") {
			if own != 0 || drawn != 0 {
				t.Errorf("%s row counts CIFAR-10-C samples", kind)
			}
			continue
		}
		rows++
		if n := cl.Col("samples").Int64[i]; n != testN[c] || own != fromTest[c] || own+drawn != n {
			t.Errorf("%s level %v client %d: %d samples, %d own, %d drawn; the client has %d test samples, %d from the test split",
				kind, cl.Col("level").Float64[i], c, n, own, drawn, testN[c], fromTest[c])
		}
	}
	if rows != 2*2*3 {
		t.Errorf("%d CIFAR-10-C rows, want 2 corruptions × 2 severities × 3 clients", rows)
	}
	sum, _ := table.ReadFile(filepath.Join(out, "shift_fedavg_seed-0", "summary.arrow"))
	if sum == nil || !strings.HasPrefix(sum.Meta["cifar10c_digest"], "sha256:") || !strings.Contains(sum.Meta["cifar10c"], "same class") {
		t.Errorf("summary metadata %v", sum)
	}
	if code, vout, _ := fedpipe(t, "verify", m, "--store", store, "--data", data); code != 0 || !strings.Contains(vout, "cifar10c:fog 5") {
		t.Errorf("verify: exit %d\n%s", code, vout)
	}

	second := runJSON(t, "run", m, "--store", store, "--data", data, "--quiet")
	for name, s := range states(second) {
		if s != "cached" {
			t.Errorf("%s %s on an unchanged rerun", name, s)
		}
	}
	f := filepath.Join(data, "CIFAR-10-C", "gaussian_noise.npy")
	b, _ := os.ReadFile(f)
	b[len(b)-1] ^= 0xff
	os.WriteFile(f, b, 0o644)
	third := runJSON(t, "run", m, "--store", store, "--data", data, "--quiet")
	st := states(third)
	if st["shift fedavg seed=0"] != "ran" || st["train fedavg seed=0"] != "cached" || st["partition seed=0"] != "cached" {
		t.Errorf("after a CIFAR-10-C byte changed: %v, want the shift stage rerun and training cached", st)
	}
}
