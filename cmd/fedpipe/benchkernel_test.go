package main

import (
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/gomlx/gemm"
)

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
