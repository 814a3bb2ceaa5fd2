package gemm

import "testing"

// cnn4Shape is one GEMM of a cnn4 training step; aT and bT: the operand is stored transposed.
type cnn4Shape struct {
	name    string
	m, n, k int
	aT, bT  bool
}

// cnn4Shapes are the GEMMs of one cnn4 training step on 28×28×1 at batch 32.
var cnn4Shapes = []cnn4Shape{
	{"conv1-fwd", 18432, 32, 25, false, false},
	{"conv1-dW", 25, 32, 18432, true, false},
	{"conv2-fwd", 2048, 64, 800, false, false},
	{"conv2-dW", 800, 64, 2048, true, false},
	{"conv2-dX", 2048, 800, 64, false, true},
	{"fc1-fwd", 32, 512, 1024, false, false},
	{"fc1-dW", 1024, 512, 32, true, false},
	{"fc1-dX", 32, 1024, 512, false, true},
}

// operands returns s's A, B (values i%7/10, i%5/10) and a C to write to.
func (s cnn4Shape) operands() (am, bm Matrix, c []float32) {
	a := make([]float32, s.m*s.k)
	bb := make([]float32, s.k*s.n)
	for i := range a {
		a[i] = float32(i%7) * 0.1
	}
	for i := range bb {
		bb[i] = float32(i%5) * 0.1
	}
	am = RowMajor(a, 0, s.k)
	if s.aT {
		am = RowMajor(a, 0, s.m).T()
	}
	bm = RowMajor(bb, 0, s.n)
	if s.bT {
		bm = RowMajor(bb, 0, s.k).T()
	}
	return am, bm, make([]float32, s.m*s.n)
}

// BenchmarkCNN4Shapes times, on one worker, the GEMMs of one cnn4 training step on 28×28×1
// at batch 32, one by one (forward, weight gradient and input gradient of each layer, with
// the operands transposed as the step has them), to see which shapes run far below the
// kernel's peak (products that Sgemm swaps also run unswapped, the others also swapped, those
// on the tall kernels also without them): go test ./gomlx/gemm -run '^$' -bench CNN4Shapes -benchtime 200x.
func BenchmarkCNN4Shapes(b *testing.B) {
	for _, s := range cnn4Shapes {
		am, bm, c := s.operands()
		s.bench(b, s.name, am, bm, c, true, true)
		if tallFits(s.m, s.n, s.k, am, bm) { // the same product on the 6-row kernels, to compare
			s.bench(b, s.name+"-without-tall", am, bm, c, true, false)
		}
		if swapPays(s.m, s.n, s.k, am, bm) { // the same product without swapping, to compare
			s.bench(b, s.name+"-unswapped", am, bm, c, false, true)
		} else { // and swapped where Sgemm does not swap it
			alwaysSwap = true
			s.bench(b, s.name+"-swapped", am, bm, c, true, false)
			alwaysSwap = false
		}
	}
}

// bench times s's product (operands from s.operands) on one worker as the sub-benchmark
// name, with swapping and the tall path enabled as given, and reports its GFLOP/s.
func (s cnn4Shape) bench(b *testing.B, name string, am, bm Matrix, c []float32, swap, tall bool) {
	b.Run(name, func(b *testing.B) {
		defer func(was, wasTall bool) { swapOperands, tallProducts = was, wasTall }(swapOperands, tallProducts)
		swapOperands, tallProducts = swap, tall
		for range b.N {
			Sgemm(s.m, s.n, s.k, am, bm, c, 0, s.n, 1)
		}
		b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

// tallShapes are weight-gradient products (A = the layer input transposed, B = the output
// gradient, both in place) of the tall path's kind, at batch 32: cnn4's two convolutions on
// 28×28×1, FedAvg-CNN's two on 32×32×3 ('same' padding) and four of ResNet-18's on 32×32×3
// (m = k·k·cin, n = cout, k = batch × output positions).
var tallShapes = []cnn4Shape{
	{"cnn4-conv1-dW", 25, 32, 18432, true, false},
	{"cnn4-conv2-dW", 800, 64, 2048, true, false},
	{"fedavgcnn-cifar-conv1-dW", 75, 32, 32768, true, false},
	{"fedavgcnn-cifar-conv2-dW", 800, 64, 8192, true, false},
	{"resnet18-conv1-dW", 27, 64, 32768, true, false},
	{"resnet18-layer1-dW", 576, 64, 32768, true, false},
	{"resnet18-layer3-dW", 2304, 256, 2048, true, false},
	{"resnet18-layer4-dW", 4608, 512, 512, true, false},
}

// BenchmarkTallShapes times the tallShapes products on one worker with the tall kernels
// (where tallFits takes them here) and without them (the 6-row kernels), in one process: go test ./gomlx/gemm -run '^$' -bench
// TallShapes -benchtime 20x -cpu 1.
func BenchmarkTallShapes(b *testing.B) {
	for _, s := range tallShapes {
		am, bm, c := s.operands()
		if tallFits(s.m, s.n, s.k, am, bm) {
			s.bench(b, s.name, am, bm, c, true, true)
		}
		s.bench(b, s.name+"-without-tall", am, bm, c, true, false)
	}
}
