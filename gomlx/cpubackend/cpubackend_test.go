package cpubackend

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func newBackend(t *testing.T) backends.Backend {
	t.Helper()
	b, err := backends.NewWithConfig(Name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func randFlat(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return x
}

// strides returns row-major strides of dims.
func strides(dims []int) []int {
	s := make([]int, len(dims))
	acc := 1
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= dims[i]
	}
	return s
}

func run1(t *testing.T, b backends.Backend, fn func(inputs []*Node) *Node, args ...any) []float64 {
	t.Helper()
	e, err := NewExec(b, fn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Finalize()
	outs, err := e.Exec(args...)
	if err != nil {
		t.Fatal(err)
	}
	return tensors.MustCopyFlatData[float64](outs[0])
}

func TestReverse(t *testing.T) {
	b := newBackend(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		dims []int
		axes []int
	}{{[]int{5}, []int{0}}, {[]int{3, 4, 5}, []int{0, 2}}, {[]int{2, 1, 6}, []int{1, 2}}, {[]int{4, 3}, nil}} {
		x := randFlat(r, 3*4*5*2)[:prod(tc.dims)]
		got := run1(t, b, func(in []*Node) *Node { return Reverse(in[0], tc.axes...) }, tensors.FromFlatDataAndDimensions(x, tc.dims...))
		st := strides(tc.dims)
		for i := range x {
			src := 0
			for a, d := range tc.dims {
				idx := i / st[a] % d
				for _, ra := range tc.axes {
					if ra == a {
						idx = d - 1 - idx
					}
				}
				src += idx * st[a]
			}
			if got[i] != x[src] {
				t.Fatalf("Reverse%v axes %v: out[%d] = %v, want %v", tc.dims, tc.axes, i, got[i], x[src])
			}
		}
	}
}

func prod(d []int) int {
	n := 1
	for _, v := range d {
		n *= v
	}
	return n
}

func TestPad(t *testing.T) {
	b := newBackend(t)
	r := rand.New(rand.NewPCG(3, 4))
	dims := []int{3, 4}
	x := randFlat(r, 12)
	for _, cfg := range [][]backends.PadAxis{
		{{Start: 1, End: 2}, {Start: 0, End: 3}},
		{{Interior: 2}, {Start: 2, Interior: 1}},
		{{Start: -1, End: 1}, {Start: 1, End: -2, Interior: 1}},
		{{}, {Start: -1, End: -1}},
	} {
		const fill = 7.5
		got := run1(t, b, func(in []*Node) *Node { return Pad(in[0], Scalar(in[0].Graph(), in[0].DType(), fill), cfg...) },
			tensors.FromFlatDataAndDimensions(x, dims...))
		// Naive: position of input index i along an axis is Start + i*(1+Interior).
		out := make([]int, 2)
		for a := range 2 {
			out[a] = cfg[a].Start + cfg[a].End + dims[a] + (dims[a]-1)*cfg[a].Interior
		}
		if len(got) != out[0]*out[1] {
			t.Fatalf("Pad %v: got %d values, want %dx%d", cfg, len(got), out[0], out[1])
		}
		want := make([]float64, out[0]*out[1])
		for i := range want {
			want[i] = fill
		}
		for i := range dims[0] {
			for j := range dims[1] {
				p := cfg[0].Start + i*(1+cfg[0].Interior)
				q := cfg[1].Start + j*(1+cfg[1].Interior)
				if p >= 0 && p < out[0] && q >= 0 && q < out[1] {
					want[p*out[1]+q] = x[i*dims[1]+j]
				}
			}
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("Pad %v: out[%d] = %v, want %v", cfg, i, got[i], want[i])
			}
		}
	}
}

// convCase is a 2D convolution; logical layouts: input [B, C, H, W], kernel [C, O, KH, KW].
type convCase struct {
	b, c, h, w, o, kh, kw int
	stride, dil           [2]int
	pad                   [2][2]int
	nchw                  bool // Physical layout NCHW/OIHW-like instead of NHWC/HWIO.
}

func (cc convCase) outDims() (int, int) {
	oh := (cc.h+cc.pad[0][0]+cc.pad[0][1]-(cc.kh-1)*cc.dil[0]-1)/cc.stride[0] + 1
	ow := (cc.w+cc.pad[1][0]+cc.pad[1][1]-(cc.kw-1)*cc.dil[1]-1)/cc.stride[1] + 1
	return oh, ow
}

// naive computes the convolution with logical indexing, returning it in the case's output layout.
func (cc convCase) naive(in, k func(b, c, y, x int) float64) []float64 {
	oh, ow := cc.outDims()
	out := make([]float64, cc.b*cc.o*oh*ow)
	for b := range cc.b {
		for o := range cc.o {
			for y := range oh {
				for x := range ow {
					s := 0.0
					for c := range cc.c {
						for i := range cc.kh {
							for j := range cc.kw {
								iy := y*cc.stride[0] + i*cc.dil[0] - cc.pad[0][0]
								ix := x*cc.stride[1] + j*cc.dil[1] - cc.pad[1][0]
								if iy >= 0 && iy < cc.h && ix >= 0 && ix < cc.w {
									s += in(b, c, iy, ix) * k(c, o, i, j)
								}
							}
						}
					}
					if cc.nchw {
						out[((b*cc.o+o)*oh+y)*ow+x] = s
					} else {
						out[((b*oh+y)*ow+x)*cc.o+o] = s
					}
				}
			}
		}
	}
	return out
}

func TestConvGeneralIm2col(t *testing.T) {
	b := newBackend(t)
	r := rand.New(rand.NewPCG(5, 6))
	cases := []convCase{
		{b: 2, c: 3, h: 9, w: 8, o: 4, kh: 3, kw: 2, stride: [2]int{1, 1}, dil: [2]int{1, 1}},
		{b: 1, c: 2, h: 10, w: 11, o: 3, kh: 3, kw: 3, stride: [2]int{2, 3}, dil: [2]int{1, 1}, pad: [2][2]int{{1, 1}, {2, 0}}},
		{b: 2, c: 1, h: 12, w: 9, o: 2, kh: 2, kw: 3, stride: [2]int{1, 2}, dil: [2]int{2, 1}, pad: [2][2]int{{0, 1}, {1, 1}}, nchw: true},
		{b: 3, c: 4, h: 6, w: 6, o: 5, kh: 5, kw: 5, stride: [2]int{1, 1}, dil: [2]int{1, 1}, nchw: true},
	}
	for i, cc := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var axes backends.ConvolveAxesConfig
			var inDims, kDims []int
			if cc.nchw {
				axes = backends.ConvolveAxesConfig{InputBatch: 0, InputChannels: 1, InputSpatial: []int{2, 3},
					KernelOutputChannels: 0, KernelInputChannels: 1, KernelSpatial: []int{2, 3},
					OutputBatch: 0, OutputChannels: 1, OutputSpatial: []int{2, 3}}
				inDims, kDims = []int{cc.b, cc.c, cc.h, cc.w}, []int{cc.o, cc.c, cc.kh, cc.kw}
			} else {
				axes = backends.ConvolveAxesConfig{InputBatch: 0, InputChannels: 3, InputSpatial: []int{1, 2},
					KernelInputChannels: 2, KernelOutputChannels: 3, KernelSpatial: []int{0, 1},
					OutputBatch: 0, OutputChannels: 3, OutputSpatial: []int{1, 2}}
				inDims, kDims = []int{cc.b, cc.h, cc.w, cc.c}, []int{cc.kh, cc.kw, cc.c, cc.o}
			}
			x, k := randFlat(r, prod(inDims)), randFlat(r, prod(kDims))
			inAt := func(b, c, y, xx int) float64 {
				if cc.nchw {
					return x[((b*cc.c+c)*cc.h+y)*cc.w+xx]
				}
				return x[((b*cc.h+y)*cc.w+xx)*cc.c+c]
			}
			kAt := func(c, o, i, j int) float64 {
				if cc.nchw {
					return k[((o*cc.c+c)*cc.kh+i)*cc.kw+j]
				}
				return k[((i*cc.kw+j)*cc.c+c)*cc.o+o]
			}
			want := cc.naive(inAt, kAt)
			got := run1(t, b, func(in []*Node) *Node {
				return ConvGeneral(in[0], in[1], axes, cc.stride[:], [][2]int{cc.pad[0], cc.pad[1]}, nil, cc.dil[:], 1, 1)
			}, tensors.FromFlatDataAndDimensions(x, inDims...), tensors.FromFlatDataAndDimensions(k, kDims...))
			if len(got) != len(want) {
				t.Fatalf("got %d values, want %d", len(got), len(want))
			}
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-9 {
					t.Fatalf("out[%d] = %v, want %v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestConvGradientWithGoMLXAutodiff checks that GoMLX's own convolution and max-pool-free
// gradients (which use Reverse, Pad and convolutions with nil strides) run on this backend
// and agree with finite differences.
func TestConvGradientWithGoMLXAutodiff(t *testing.T) {
	b := newBackend(t)
	r := rand.New(rand.NewPCG(7, 8))
	xDims, kDims := []int{2, 7, 6, 2}, []int{3, 3, 2, 3}
	x, k := randFlat(r, prod(xDims)), randFlat(r, prod(kDims))
	lossFn := func(in, kernel *Node) *Node {
		y := Convolve(in, kernel).StridePerAxis(2, 1).PadSame().Done()
		return ReduceAllSum(Mul(y, y))
	}
	e, err := NewExec(b, func(in []*Node) []*Node {
		loss := lossFn(in[0], in[1])
		return append([]*Node{loss}, Gradient(loss, in[0], in[1])...)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Finalize()
	eval := func(x, k []float64) []*tensors.Tensor {
		outs, err := e.Exec(tensors.FromFlatDataAndDimensions(x, xDims...), tensors.FromFlatDataAndDimensions(k, kDims...))
		if err != nil {
			t.Fatal(err)
		}
		return outs
	}
	outs := eval(x, k)
	grads := [][]float64{tensors.MustCopyFlatData[float64](outs[1]), tensors.MustCopyFlatData[float64](outs[2])}
	for which, v := range [][]float64{x, k} {
		for range 6 {
			idx := r.IntN(len(v))
			const eps = 1e-6
			orig := v[idx]
			v[idx] = orig + eps
			up := tensors.ToScalar[float64](eval(x, k)[0])
			v[idx] = orig - eps
			down := tensors.ToScalar[float64](eval(x, k)[0])
			v[idx] = orig
			fd := (up - down) / (2 * eps)
			if math.Abs(fd-grads[which][idx]) > 1e-5+1e-5*math.Abs(fd) {
				t.Errorf("input %d [%d]: gradient %v, finite differences %v", which, idx, grads[which][idx], fd)
			}
		}
	}
}

// TestMaxPoolGradient checks SelectAndScatterMax, reached through GoMLX's gradient of
// MaxPool, against a loop: each window's gradient goes to its first maximal element in
// row-major window order (XLA's choice on ties), the rest and the uncovered last row and
// column (odd sizes) get 0.
func TestMaxPoolGradient(t *testing.T) {
	b := newBackend(t)
	r := rand.New(rand.NewPCG(3, 4))
	for _, dims := range [][]int{{2, 5, 7, 3}, {1, 4, 4, 2}} {
		n, h, w, c := dims[0], dims[1], dims[2], dims[3]
		ph, pw := h/2, w/2
		x := make([]float64, prod(dims))
		for i := range x {
			x[i] = float64(r.IntN(3)) // few values: many ties
		}
		v := randFlat(r, n*ph*pw*c)
		got := run1(t, b, func(in []*Node) *Node {
			pooled := MaxPool(in[0]).Window(2).Done()
			return Gradient(ReduceAllSum(Mul(pooled, in[1])), in[0])[0]
		}, tensors.FromFlatDataAndDimensions(x, dims...), tensors.FromFlatDataAndDimensions(v, n, ph, pw, c))
		want := make([]float64, len(x))
		at := func(s, i, j, ch int) int { return ((s*h+i)*w+j)*c + ch }
		for s := range n {
			for pi := range ph {
				for pj := range pw {
					for ch := range c {
						best := at(s, 2*pi, 2*pj, ch)
						for di := range 2 {
							for dj := range 2 {
								if k := at(s, 2*pi+di, 2*pj+dj, ch); x[k] > x[best] {
									best = k
								}
							}
						}
						want[best] += v[((s*ph+pi)*pw+pj)*c+ch]
					}
				}
			}
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("dims %v: gradient[%d] = %v, want %v", dims, i, got[i], want[i])
			}
		}
	}
}
