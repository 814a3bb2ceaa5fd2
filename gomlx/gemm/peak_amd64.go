package gemm

// fmaPeak256 runs n iterations of 12 independent 256-bit fused multiply-adds (on zeros),
// fmaPeak512 the same with 512-bit ones and fmaPeak512x24 with 24 independent 512-bit
// accumulators: throughput loops for avx512_bench_test.go, which measures whether this CPU
// runs 512-bit FMAs at full width or in two 256-bit halves. Not used by Sgemm.
//
//go:noescape
func fmaPeak256(n int)

// fmaPeak512 is fmaPeak256 with zmm registers (AVX-512F only).
//
//go:noescape
func fmaPeak512(n int)

// fmaPeak512x24 is fmaPeak512 with 24 accumulators (AVX-512F only), to rule out FMA
// latency as the limit.
//
//go:noescape
func fmaPeak512x24(n int)

// peakLoop returns FMAPeak's throughput loop for the kernels in use, the floating-point
// operations of one of its turns and its name; nil without the assembly kernels.
func peakLoop() (func(int), float64, string) {
	switch {
	case useAVX512:
		return fmaPeak512x24, 24 * 16 * 2, "zmm, 24 accumulators"
	case useAVX2:
		return fmaPeak256, 12 * 8 * 2, "ymm, 12 accumulators"
	}
	return nil, 0, ""
}
