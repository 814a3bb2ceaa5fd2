package gemm

// copyRows16AVX2 copies kb rows of 16 values, stride elements apart in src, one after
// another into dst (see pack_amd64.s).
//
//go:noescape
func copyRows16AVX2(kb int, dst, src *float32, stride int)
