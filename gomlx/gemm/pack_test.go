package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPackRowsMatchesCopy checks packRows (the assembly loop where it runs) against a
// copy() per row, bit for bit on NaN payloads, infinities and signed zeros, for row counts
// from 1 to a whole kc block and several strides, and that it writes nothing past its
// kb·nr values.
func TestPackRowsMatchesCopy(t *testing.T) {
	hasAsm := useAVX2
	defer func() { useAVX2 = hasAsm }()
	r := rand.New(rand.NewPCG(41, 42))
	for _, kb := range []int{1, 2, 3, 7, 64, kc} {
		for _, stride := range []int{nr, nr + 1, 100, 1031} {
			src := make([]float32, (kb-1)*stride+nr)
			for i := range src {
				src[i] = math.Float32frombits(r.Uint32()) // NaNs with payloads, ±0, ±Inf among them.
			}
			want := make([]float32, kb*nr)
			for p := range kb {
				copy(want[p*nr:p*nr+nr], src[p*stride:p*stride+nr])
			}
			for _, asm := range []bool{false, true} {
				useAVX2 = asm && hasAsm
				got := make([]float32, kb*nr+5)
				sentinel := math.Float32frombits(0x7fa5a5a5)
				for i := range got {
					got[i] = sentinel
				}
				packRows(got, src, kb, stride)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("kb %d stride %d asm %v: dst[%d] = %#x, want %#x", kb, stride, useAVX2, i,
							math.Float32bits(got[i]), math.Float32bits(want[i]))
					}
				}
				for i := kb * nr; i < len(got); i++ {
					if math.Float32bits(got[i]) != math.Float32bits(sentinel) {
						t.Fatalf("kb %d stride %d asm %v: wrote dst[%d] past the panel", kb, stride, useAVX2, i)
					}
				}
			}
		}
	}
}
