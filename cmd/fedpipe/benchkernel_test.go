package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/gomlx/gemm"
)

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

// TestBenchKernelFlag: an ISA this machine lacks, or one given twice, is refused before
// anything is timed.
func TestBenchKernelFlag(t *testing.T) {
	isa := gemm.KernelISAs()[0] // available on every machine
	if code, _, errOut := fedpipe(t, "bench", "--kernel", isa+","+isa); code != exitInvalid || !strings.Contains(errOut, "given twice") {
		t.Errorf("--kernel %s,%s: exit %d, stderr %q", isa, isa, code, errOut)
	}
	for _, args := range [][]string{{"bench", "--kernel", "sse"}, {"bench", "--round", "--kernel", "avx2,mmx"}} {
		code, _, errOut := fedpipe(t, args...)
		if code != exitInvalid || !strings.Contains(errOut, "unavailable here") {
			t.Errorf("%v: exit %d, stderr %q; want %d and the ISAs available", args, code, errOut, exitInvalid)
		}
	}
}
