//go:build amd64

package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPackEdgeMatchesGeneral checks packEdge against packA's general loop, bit for bit on
// NaN payloads, infinities and signed zeros: ragged panels of 1 to 5 rows, A stored by
// rows, by columns and with neither stride 1, offsets, every kb up to past a kc block, a
// dirty destination (packEdge must zero the padding rows), and nothing written past the
// panel.
func TestPackEdgeMatchesGeneral(t *testing.T) {
	defer func() { fastEdges = true }()
	r := rand.New(rand.NewPCG(48, 2))
	for rows := 1; rows < mr; rows++ {
		for _, kb := range []int{1, 2, 5, 25, 63, kc} {
			for _, layout := range []string{"rows", "cols", "strided"} {
				// A is rows×kb inside a larger matrix (extra rows and columns around it).
				const off = 7
				var a Matrix
				switch layout {
				case "rows":
					a = Matrix{Offset: off, RowStride: kb + 3, ColStride: 1}
				case "cols":
					a = Matrix{Offset: off, RowStride: 1, ColStride: rows + 4}
				default:
					a = Matrix{Offset: off, RowStride: 2, ColStride: 2*rows + 3}
				}
				a.Data = make([]float32, off+(rows-1)*a.RowStride+(kb-1)*a.ColStride+1+5)
				fill(r, a.Data, 0.3)
				sentinel := math.Float32frombits(0x7fa5a5a5)
				pack := func(fast bool) []float32 {
					fastEdges = fast
					dst := make([]float32, kb*mr+9)
					for i := range dst {
						dst[i] = sentinel
					}
					packA(dst, a, 0, 0, rows, kb)
					return dst
				}
				want, got := pack(false), pack(true)
				sameBits(t, fmt.Sprintf("rows=%d kb=%d %s", rows, kb, layout), got, want)
				for i := kb * mr; i < len(got); i++ {
					if math.Float32bits(got[i]) != math.Float32bits(sentinel) {
						t.Fatalf("rows=%d kb=%d %s: wrote dst[%d] past the panel", rows, kb, layout, i)
					}
				}
			}
		}
	}
}

// edgeCases are products with ragged row panels: the weight gradients and the other
// products of cnn4 (28×28×1), FedAvg's CNN (28×28×1, padding 2) and ResNet-18's
// convolutions whose rows are not a multiple of 6 (its 3×3×3 stem, 27 rows, and 1×1
// shortcuts of 64, 128 and 256 input channels), at batch 32 or less, and small ones where
// every ragged size meets every column count around one and two panels.
func edgeCases(r *rand.Rand) []gemmCase {
	cases := []gemmCase{
		{m: 25, n: 32, k: 18432, transA: true}, // cnn4 conv1 dW
		{m: 2048, n: 64, k: 800},               // cnn4 conv2 forward
		{m: 800, n: 64, k: 2048, transA: true}, // cnn4 conv2 dW
		{m: 2048, n: 800, k: 64, transB: true}, // cnn4 conv2 dX
		{m: 1024, n: 512, k: 32, transA: true}, // cnn4 fc1 dW
		{m: 32, n: 512, k: 1024},               // cnn4 fc1 forward
		{m: 32, n: 1024, k: 512, transB: true}, // cnn4 fc1 dX
		{m: 25, n: 32, k: 25088, transA: true}, // FedAvg CNN conv1 dW (28×28 outputs)
		{m: 6272, n: 64, k: 800},               // FedAvg CNN conv2 forward (14×14 outputs)
		{m: 800, n: 64, k: 6272, transA: true}, // FedAvg CNN conv2 dW
		{m: 3136, n: 512, k: 10, transB: true}, // FedAvg CNN fc dX, 3136 = 7·7·64 (batch 10)
		{m: 27, n: 64, k: 8192, transA: true},  // ResNet-18 stem dW (32×32, batch 8)
		{m: 64, n: 128, k: 2048, transA: true}, // ResNet-18 1×1 shortcut dW
		{m: 128, n: 256, k: 512, transA: true}, // ResNet-18 1×1 shortcut dW
		{m: 256, n: 512, k: 128, transA: true}, // ResNet-18 1×1 shortcut dW
		{m: 8192, n: 64, k: 27, pad: 1},        // ResNet-18 stem forward
		{m: 97, n: 65, k: 600, pad: 2},         // ragged everywhere, several kc blocks
		{m: 13, n: 49, k: 513, transA: true, transB: true},
	}
	for m := 1; m <= 19; m++ {
		for _, n := range []int{1, 15, 16, 17, 31, 32, 33, 48, 64, 65, 96} {
			cases = append(cases, gemmCase{m: m, n: n, k: []int{1, 7, 25, 300}[r.IntN(4)],
				transA: r.IntN(2) == 0, transB: r.IntN(2) == 0, pad: r.IntN(3)})
		}
	}
	return cases
}

// TestSgemmEdgesMatchGeneral runs every product of edgeCases with the ragged-edge paths of
// edge.go and without, and requires the same bits in all of C (the padding too), on each
// kernel the CPU has (AVX-512, AVX2, generic), one and three workers, A read in place or
// packed, B pre-packed or not, products swapped or not, with NaNs, infinities, signed
// zeros, subnormals and overflowing products among the operands in some products.
func TestSgemmEdgesMatchGeneral(t *testing.T) {
	defer func() { fastEdges, inPlaceA, prepackB, swapOperands, alwaysSwap = true, true, true, true, false }()
	isas := []string{"avx512", "avx2", "generic"}
	for _, isa := range isas {
		t.Run(isa, func(t *testing.T) {
			switch {
			case isa == "avx512":
				needAVX512(t)
			case isa == "avx2" && !useAVX2:
				t.Skip("this CPU lacks AVX2 and FMA (or $FEDPIPE_GEMM_GENERIC=1): nothing to compare")
			case isa == "generic" && useAVX2:
				// As $FEDPIPE_GEMM_GENERIC=1 has it: no assembly kernel at all.
				was := useAVX512
				useAVX2, useAVX512 = false, false
				defer func() { useAVX2, useAVX512 = true, was }()
			}
			if isa != "generic" {
				was := useAVX512
				defer func() { useAVX512 = was }()
				if err := SetKernelISA(isa); err != nil {
					t.Fatal(err)
				}
			}
			r := rand.New(rand.NewPCG(48, 48))
			for i, tc := range edgeCases(r) {
				if isa == "generic" && tc.m*tc.n*tc.k > 1<<24 {
					continue // The pure-Go kernel is slow; the small products cover its edges.
				}
				special := []float64{0, 0.01, 0.2}[i%3]
				a, b := tc.matrices(r, special)
				workers := []int{1, 3}[i%2]
				inPlaceA, prepackB = i%3 != 1, i%4 != 2
				swapOperands, alwaysSwap = i%5 != 3, i%7 == 4
				fastEdges = false
				want := tc.run(a, b, workers)
				fastEdges = true
				got := tc.run(a, b, workers)
				sameBits(t, fmt.Sprintf("%s %+v special=%g workers=%d inPlaceA=%v prepackB=%v swap=%v/%v",
					isa, tc, special, workers, inPlaceA, prepackB, swapOperands, alwaysSwap), got, want)
			}
		})
	}
}
