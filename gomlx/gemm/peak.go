package gemm

import (
	"runtime"
	"sync"
	"time"
)

// FMAPeak measures what the CPU's fused multiply-adds can do: threads goroutines (each
// locked to its OS thread) run, side by side for about d, the throughput loop of the widest
// registers the kernels in use have (24 independent zmm accumulators with AVX-512, 12 ymm
// ones with AVX2; see peak_amd64.s), and FMAPeak returns their total rate in GFLOP/s (2
// per multiply-add per lane) and the loop's name. Off amd64, or without AVX2 and FMA, it
// returns 0 and "". It is the reference a training rate is held against (`fedpipe bench
// --round` prints both); run it on an otherwise idle machine.
func FMAPeak(threads int, d time.Duration) (gflops float64, loop string) {
	f, flopsPerTurn, loop := peakLoop()
	if f == nil || threads < 1 {
		return 0, ""
	}
	const turns = 1 << 14
	var wg sync.WaitGroup
	total := make([]float64, threads)
	start := time.Now()
	for t := range threads {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			n := 0
			for time.Since(start) < d {
				f(turns)
				n++
			}
			total[t] = float64(n) * turns * flopsPerTurn
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	var sum float64
	for _, x := range total {
		sum += x
	}
	return sum / secs / 1e9, loop
}
