package gemm

import (
	"math"
	"testing"
	"time"
)

// TestFMAPeakUsesTheKernelsRegisters checks that FMAPeak runs the loop of the registers the
// kernels in use have (zmm with AVX-512, ymm with AVX2) and measures a positive rate on one
// and two threads.
func TestFMAPeakUsesTheKernelsRegisters(t *testing.T) {
	for _, isa := range tallISAs(t) {
		withISA(t, isa, func() {
			want := map[string]string{"avx512": "zmm, 24 accumulators", "avx2": "ymm, 12 accumulators"}[isa]
			for _, threads := range []int{1, 2} {
				g, loop := FMAPeak(threads, 20*time.Millisecond)
				if loop != want || !(g > 0) || math.IsInf(g, 0) {
					t.Fatalf("%s, %d threads: FMAPeak = %v GFLOP/s on %q, want a positive rate on %q", isa, threads, g, loop, want)
				}
			}
		})
	}
	if g, loop := FMAPeak(0, time.Millisecond); g != 0 || loop != "" {
		t.Fatalf("FMAPeak on 0 threads = %v, %q", g, loop)
	}
}
