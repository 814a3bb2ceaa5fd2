package gemm

import "testing"

// BenchmarkEdges times, on one worker, the cnn4 products with ragged row panels with the
// ragged-edge paths of edge.go ("new") and without ("old"), for an A/B in one process:
// go test ./gomlx/gemm -run '^$' -bench Edges -benchtime 200x -cpu 1 (run it several times
// to interleave the two).
func BenchmarkEdges(b *testing.B) {
	defer func() { fastEdges = true }()
	for _, s := range cnn4Shapes {
		if s.m%mr == 0 {
			continue
		}
		am, bm, c := s.operands()
		for _, fast := range []bool{false, true} {
			name := s.name + map[bool]string{false: "/old", true: "/new"}[fast]
			b.Run(name, func(b *testing.B) {
				fastEdges = fast
				for range b.N {
					Sgemm(s.m, s.n, s.k, am, bm, c, 0, s.n, 1)
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
