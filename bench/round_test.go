package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/gomlx/gemm"
	"github.com/fedpipe/fedpipe/model"
)

// TestFMALine holds a round's training rate against the FMA loop: for cnn4 (24.68 MFLOP of
// products a sample) at 4,000 samples/s, training is 98.7 GFLOP/s, and the printed share is
// that over the loop's printed rate; the loop runs on as many threads as clients trained
// side by side.
func TestFMALine(t *testing.T) {
	if gemm.KernelISA() == "generic" {
		t.Skip("no AVX2 and FMA here: bench prints that there is no FMA loop")
	}
	spec := model.ModelSpec{Arch: model.ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	res := RoundResult{RoundSeconds: 13.125, RoundSamples: 52500, Workers: 2}
	line := fmaLine(spec, res, gemm.KernelISA())
	var loop1, loop2 string
	var threads int
	var peak, train, samples, mflop, share float64
	_, err := fmt.Sscanf(strings.ReplaceAll(line, ",", ""), "FMA loop (%s %s accumulators %d threads measured now for 1 s): %f GFLOP/s; training %f GFLOP/s (%f samples/s x %f MFLOP of products a sample) = %f%% of it",
		&loop1, &loop2, &threads, &peak, &train, &samples, &mflop, &share)
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	// The loop's rate is printed to a whole GFLOP/s and the share to a whole percent: the
	// share lies within what the rates the printed one rounds from give (a loaded machine's
	// low rate widens that).
	lo, hi := 100*98.72/(peak+0.5)-0.5, math.Inf(1)
	if peak > 0.5 {
		hi = 100*98.72/(peak-0.5) + 0.5
	}
	if threads != 2 || samples != 4000 || mflop != 24.7 || train != 99 || peak <= 0 || share < lo || share > hi {
		t.Errorf("%q: threads %d, %g samples/s, %g MFLOP, training %g GFLOP/s, %g%% of %g", line, threads, samples, mflop, train, share, peak)
	}
}

// TestKernelOrder: several kernels are timed in mirrored order, one kernel once.
func TestKernelOrder(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"avx2"}, []string{"avx2"}},
		{[]string{"avx512", "avx2"}, []string{"avx512", "avx2", "avx2", "avx512"}},
	} {
		if got := kernelOrder(c.in); !slices.Equal(got, c.want) {
			t.Errorf("kernelOrder(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
