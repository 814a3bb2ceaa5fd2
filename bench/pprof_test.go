package bench

import (
	"bytes"
	"runtime/pprof"
	"testing"
	"time"
)

func TestStageOf(t *testing.T) {
	for _, c := range []struct {
		stack []string
		want  string
	}{
		{[]string{"github.com/fedpipe/fedpipe/gomlx/gemm.kernel6x16", "github.com/fedpipe/fedpipe/gomlx/fastcpu.execDot"}, "GEMM"},
		{[]string{"github.com/fedpipe/fedpipe/gomlx/fastcpu.gatherRuns", "github.com/gomlx/gomlx/backends/simplego.(*Executable).Execute"}, "graph ops"},
		{[]string{"github.com/fedpipe/fedpipe/stages/train/methods.mix", "github.com/fedpipe/fedpipe/stages/train/methods.apfl.Train", "github.com/fedpipe/fedpipe/stages/train.Run"}, "method code"},
		{[]string{"runtime.memmove", "github.com/fedpipe/fedpipe/model.(*Session).Params", "github.com/fedpipe/fedpipe/stages/train/methods.apfl.Train"}, "model I/O"},
		{[]string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, "GC+alloc"},
		{[]string{"main.main"}, "other"},
	} {
		if got := stageOf(c.stack); got != c.want {
			t.Errorf("stageOf(%v) = %s, want %s", c.stack, got, c.want)
		}
	}
}

// spin burns CPU in this package's own code (stage "other").
func spin(d time.Duration) float64 {
	x := 1.0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 1000; i++ {
			x = x*1.0000001 + 1e-9
		}
	}
	return x
}

func TestProfileStageSecondsReadsARealProfile(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("a CPU profile is running: %v", err)
	}
	spin(300 * time.Millisecond)
	pprof.StopCPUProfile()
	got, err := profileStageSeconds(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, v := range got {
		total += v
	}
	// 300 ms of spinning at pprof's 100 Hz: on a busy machine fewer samples, never none.
	if total <= 0.02 || total > 1 {
		t.Fatalf("profile of a 0.3 s spin reads %.3f CPU seconds (%v)", total, got)
	}
	if got["other"] < 0.5*total {
		t.Fatalf("the spin is this package's code (other), got %v", got)
	}
	if _, err := profileStageSeconds([]byte("not a profile")); err == nil {
		t.Fatal("a malformed profile was read")
	}
}
