//go:build amd64

package gemm

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time of the calling thread.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// The figures of docs/avx512.md:
//
//	go test ./gomlx/gemm -run '^$' -bench 'FMAPeak|MicroKernel|CNN4ISA' -count 5
//
// FMAPeak tells whether 512-bit FMAs run at full width (twice the 256-bit GFLOP/s) or in two
// halves (the same GFLOP/s); MicroKernel times the micro-kernels alone on cache-resident
// panels (kc = 256); CNN4ISA times whole products at the train step's shapes with each ISA.

// onThreads runs f on threads goroutines at once (one: the caller's) and waits for them.
func onThreads(threads int, f func()) {
	if threads == 1 {
		f()
		return
	}
	var wg sync.WaitGroup
	for range threads {
		wg.Go(f)
	}
	wg.Wait()
}

// BenchmarkFMAPeak runs the throughput loops of peak_amd64.s on one and two threads.
func BenchmarkFMAPeak(b *testing.B) {
	const turns = 1 << 16
	for _, l := range []struct {
		name  string
		f     func(int)
		flops float64 // per turn
		need  bool    // needs AVX-512
	}{
		{"ymm-12acc", fmaPeak256, 12 * 8 * 2, false},
		{"zmm-12acc", fmaPeak512, 12 * 16 * 2, true},
		{"zmm-24acc", fmaPeak512x24, 24 * 16 * 2, true},
	} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", l.name, threads), func(b *testing.B) {
				if l.need && !hasAVX512 {
					b.Skip("no AVX-512F")
				}
				if !cpuHasAVX2 {
					b.Skip("no AVX2")
				}
				// Each thread runs all b.N calls: a barrier per call (both threads started and
				// awaited every 65,536 turns) made the two-thread figure 10–20% low.
				onThreads(threads, func() {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					for range b.N {
						l.f(turns)
					}
				})
				b.ReportMetric(l.flops*turns*float64(threads)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkMicroKernel times one 6×32 block of C over k = kc from packed, cache-resident
// panels: two calls of the AVX2 6×16 kernel or one of the AVX-512 6×32.
func BenchmarkMicroKernel(b *testing.B) {
	a := make([]float32, kc*mr)
	bp := make([]float32, 2*kc*nr)
	for i := range a {
		a[i] = float32(i%7) * 0.1
	}
	for i := range bp {
		bp[i] = float32(i%5) * 0.1
	}
	for _, kk := range []struct {
		name   string
		f      func(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
		panels int  // B panels per call
		needs  bool // needs AVX-512
	}{
		{"avx2-6x16", kernel6x16AVX2Cols, 1, false},
		{"avx512-6x32", kernel6x32AVX512Cols, 2, true},
		{"avx2-6x16-rows", kernel6x16AVX2Rows, 1, false},
		{"avx512-6x32-rows", kernel6x32AVX512Rows, 2, true},
	} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", kk.name, threads), func(b *testing.B) {
				if (kk.needs && !hasAVX512) || !cpuHasAVX2 {
					b.Skip("ISA missing")
				}
				for b.Loop() {
					onThreads(threads, func() {
						var c [mr * 2 * nr]float32
						for range 256 {
							for q := 0; q < 2; q += kk.panels {
								kk.f(kc, &a[0], mr, &bp[q*kc*nr], &c[q*nr], 2*nr, false)
							}
						}
					})
				}
				b.ReportMetric(256*2*mr*2*nr*kc*float64(threads)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// cnn4InferShapes are the forward GEMMs of cnn4 inference on 28×28×1 at batch 256.
var cnn4InferShapes = []cnn4Shape{
	{"conv1-fwd-b256", 147456, 32, 25, false, false},
	{"conv2-fwd-b256", 16384, 64, 800, false, false},
	{"fc1-fwd-b256", 256, 512, 1024, false, false},
}

// BenchmarkCNN4ISA times each GEMM of a cnn4 training step (cnn4Shapes) with every ISA this
// CPU has, on one and two workers, and the forward GEMMs of inference at batch 256 (with
// GFLOP/cpu-s: flops per second of the thread's CPU time, steadier on a busy machine).
func BenchmarkCNN4ISA(b *testing.B) {
	was := useAVX512
	defer func() { useAVX512 = was }()
	for _, s := range append(cnn4Shapes, cnn4InferShapes...) {
		am, bm, c := s.operands()
		Sgemm(s.m, s.n, s.k, am, bm, c, 0, s.n, 1) // C's pages faulted in before any timing
		for _, threads := range []int{1, 2} {
			for _, isa := range KernelISAs() {
				b.Run(fmt.Sprintf("%s/threads=%d/%s", s.name, threads, isa), func(b *testing.B) {
					if err := SetKernelISA(isa); err != nil {
						b.Fatal(err)
					}
					// On one worker Sgemm runs on this goroutine: its thread's CPU time leaves out
					// the time other processes of a busy machine held the core.
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					cpu0 := threadCPU()
					for b.Loop() {
						Sgemm(s.m, s.n, s.k, am, bm, c, 0, s.n, threads)
					}
					flops := 2 * float64(s.m*s.n*s.k) * float64(b.N)
					b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					if threads == 1 {
						b.ReportMetric(flops/(threadCPU()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
					}
				})
			}
		}
	}
}
