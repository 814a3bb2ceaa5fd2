package model

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// TestCheckBackendCPU checks fpfast against fpcpu: one round apart by float rounding only,
// each repeatable, and fpfast's lockstep round the same bits as its client-by-client one.
func TestCheckBackendCPU(t *testing.T) {
	cfg := DefaultCheckConfig()
	cfg.Spec.InputShape = []int{16, 16, 1}
	cfg.TrainSamples, cfg.Clients = 300, 3
	res, err := CheckBackend(CPUBackend, OracleBackend, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.RelDiff > 1e-4 || res.RelDiff == 0 || res.Worst == "" || res.WorstTensor < res.RelDiff {
		t.Errorf("fpfast vs fpcpu after a round: %g (tensor %s: %g), want rounding-sized and non-zero", res.RelDiff, res.Worst, res.WorstTensor)
	}
	if !res.Repeatable || !res.Lockstep || res.LockstepRelDiff != 0 || !res.LockstepRepeatable {
		t.Errorf("repeatable %v, lockstep %v at %g, repeatable %v; want fpfast's lockstep bit-identical", res.Repeatable, res.Lockstep, res.LockstepRelDiff, res.LockstepRepeatable)
	}
	if res.Clients != 3 || res.Samples == 0 || res.Steps < res.Samples/cfg.Batch {
		t.Errorf("round of %d clients, %d samples, %d steps", res.Clients, res.Samples, res.Steps)
	}
}

func TestRelDiff(t *testing.T) {
	b := tensor.List{{Name: "w", Shape: []int{2}, Data: []float32{3, -4}}, {Name: "z", Shape: []int{1}, Data: []float32{0}}}
	a := tensor.List{{Name: "z", Shape: []int{1}, Data: []float32{0.5}}, {Name: "w", Shape: []int{2}, Data: []float32{3, -4}}}
	if whole, worst, where := RelDiff(a, b); math.Abs(whole-0.1) > 1e-9 || worst != 0.5 || where != "z" {
		t.Errorf("RelDiff = %g, %g at %s; want 0.5/5 over all, 0.5 (absolute, zero scale) at z", whole, worst, where)
	}
	a[0].Data[0] = 0
	a[1].Data[0] = 3.03
	if whole, worst, where := RelDiff(a, b); math.Abs(whole-0.006) > 1e-6 || math.Abs(worst-0.006) > 1e-6 || where != "w" {
		t.Errorf("RelDiff = %g, %g at %s; want 0.006 at w", whole, worst, where)
	}
	a[1].Data[0] = float32(math.NaN())
	if whole, worst, _ := RelDiff(a, b); !math.IsInf(whole, 1) || !math.IsInf(worst, 1) {
		t.Errorf("NaN: %g %g", whole, worst)
	}
	if whole, _, where := RelDiff(a[:1], b); !math.IsInf(whole, 1) || where != "w" {
		t.Errorf("missing tensor: %g at %s", whole, where)
	}
}

// TestXLAAgreesWithCPU is issue 21's check on a GPU: one round on the XLA backend
// ($FEDPIPE_TEST_XLA, default xla:cuda) lands within 1e-4 (relative) of fpfast's, and
// repeats itself bit for bit, client by client and in lockstep. It skips, saying why,
// where no XLA backend can be had (a build without -tags xla, or no plugin).
func TestXLAAgreesWithCPU(t *testing.T) {
	want := os.Getenv("FEDPIPE_TEST_XLA")
	if want == "" {
		want = "xla:cuda"
	}
	backend, err := ResolveBackend(want)
	if err != nil {
		t.Skipf("no XLA backend to check: %v", err)
	}
	res, err := CheckBackend(backend, CPUBackend, DefaultCheckConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.RelDiff > 1e-4 {
		t.Errorf("%s vs %s after a round: %g relative (tensor %s: %g), want ≤ 1e-4", res.Backend, res.Reference, res.RelDiff, res.Worst, res.WorstTensor)
	}
	if !res.Repeatable || (res.Lockstep && !res.LockstepRepeatable) {
		t.Errorf("reruns differ: client by client %v, lockstep %v", res.Repeatable, res.LockstepRepeatable)
	}
	if res.Lockstep && res.LockstepRelDiff > 1e-4 {
		t.Errorf("lockstep vs client by client on %s: %g relative", res.Backend, res.LockstepRelDiff)
	}
}

// A check fails past CheckTolerance, when a rerun differs, or, in lockstep, when either
// does; its text ends "ok" or "FAILED" accordingly and names the reference.
func TestBackendCheckFailed(t *testing.T) {
	good := BackendCheck{Reference: "ref-id", RelDiff: CheckTolerance / 2, Repeatable: true, Lockstep: true,
		LockstepRepeatable: true}
	bad := []BackendCheck{good, good, good, good}
	bad[0].RelDiff = 2 * CheckTolerance
	bad[1].Repeatable = false
	bad[2].LockstepRepeatable = false
	bad[3].LockstepRelDiff = 2 * CheckTolerance
	if good.Failed() {
		t.Errorf("%+v failed", good)
	}
	var b strings.Builder
	good.WriteText(&b)
	if !strings.Contains(b.String(), "vs ref-id: relative difference") || !strings.HasSuffix(b.String(), "          ok\n") {
		t.Errorf("text:\n%s", b.String())
	}
	for _, r := range bad {
		b.Reset()
		r.WriteText(&b)
		if !r.Failed() || !strings.HasSuffix(b.String(), "FAILED\n") {
			t.Errorf("%+v: failed %v, text:\n%s", r, r.Failed(), b.String())
		}
	}
}
