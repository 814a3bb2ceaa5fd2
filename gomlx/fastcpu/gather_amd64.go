package fastcpu

import "golang.org/x/sys/cpu"

// gather1AVX2 is execGather's copy of single values with VPGATHERDD: dst[m] =
// src[min(max(idx[m], 0), last)] for m in [0, n), n a multiple of 8; see gather_amd64.s.
//
//go:noescape
func gather1AVX2(n int, dst, src *float32, idx *int32, last int32)

// hasGatherAVX2 reports whether gather1AVX2 can run here.
var hasGatherAVX2 = cpu.X86.HasAVX2
