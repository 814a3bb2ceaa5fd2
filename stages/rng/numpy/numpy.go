// Package numpy replays numpy's legacy global generator (np.random.seed, then
// np.random.shuffle, dirichlet, …: a RandomState over MT19937), for settings that must draw
// exactly what another project's numpy code drew (FL-bench's partition: stages/partition
// DirichletFLBench). fedpipe's own streams come from stages/rng; this one is seeded by a
// single number, as numpy's is, and its numbers depend on every draw before them.
//
// Integers and uniforms are numpy's bit for bit. Gamma and Dirichlet variates go through
// math.Log and math.Pow, which may differ from the C library numpy calls by an ulp or so;
// where such a value is only compared or scaled and truncated (FL-bench's cut points) the
// outcome is the same except on a knife edge.
package numpy

import "math"

const (
	n         = 624
	m         = 397
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
	matrixA   = 0x9908b0df
)

// Rand is numpy's RandomState: MT19937 with numpy's legacy samplers.
type Rand struct {
	key      [n]uint32
	pos      int
	hasGauss bool
	gauss    float64
}

// New returns the generator np.random.seed(seed) leaves (MT19937's init_genrand).
func New(seed uint32) *Rand {
	r := &Rand{}
	s := seed
	for i := range n {
		r.key[i] = s
		s = 1812433253*(s^(s>>30)) + uint32(i) + 1
	}
	r.pos = n
	return r
}

// generate refills the state (MT19937's twist).
func (r *Rand) generate() {
	k := &r.key
	for i := range n {
		y := k[i]&upperMask | k[(i+1)%n]&lowerMask
		v := k[(i+m)%n] ^ y>>1
		if y&1 != 0 {
			v ^= matrixA
		}
		k[i] = v
	}
	r.pos = 0
}

// Uint32 is the next 32-bit output (tempered).
func (r *Rand) Uint32() uint32 {
	if r.pos == n {
		r.generate()
	}
	y := r.key[r.pos]
	r.pos++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// Float64 is random_sample(): 53 random bits from two outputs, in [0, 1).
func (r *Rand) Float64() float64 {
	a, b := r.Uint32()>>5, r.Uint32()>>6
	return (float64(a)*67108864 + float64(b)) / 9007199254740992
}

// interval is a uniform integer in [0, max] by masked rejection (numpy's random_interval,
// for max below 2³²).
func (r *Rand) interval(max uint32) uint32 {
	if max == 0 {
		return 0
	}
	mask := max
	mask |= mask >> 1
	mask |= mask >> 2
	mask |= mask >> 4
	mask |= mask >> 8
	mask |= mask >> 16
	for {
		if v := r.Uint32() & mask; v <= max {
			return v
		}
	}
}

// Shuffle permutes x in place as shuffle() permutes a one-dimensional array (Fisher-Yates
// from the last element down).
func (r *Rand) Shuffle(x []int) {
	for i := len(x) - 1; i > 0; i-- {
		j := r.interval(uint32(i))
		x[i], x[j] = x[j], x[i]
	}
}

// Exponential is standard_exponential() of the legacy generator.
func (r *Rand) Exponential() float64 { return -math.Log(1 - r.Float64()) }

// Normal is the legacy standard normal (polar method; every second call returns the value
// the call before it kept).
func (r *Rand) Normal() float64 {
	if r.hasGauss {
		r.hasGauss = false
		g := r.gauss
		r.gauss = 0
		return g
	}
	var x1, x2, r2 float64
	for {
		x1 = 2*r.Float64() - 1
		x2 = 2*r.Float64() - 1
		r2 = x1*x1 + x2*x2
		if r2 < 1 && r2 != 0 {
			break
		}
	}
	f := math.Sqrt(-2 * math.Log(r2) / r2)
	r.gauss, r.hasGauss = f*x1, true
	return f * x2
}

// Gamma is the legacy standard_gamma(shape): exponential at shape 1, Johnk-style rejection
// below 1, Marsaglia and Tsang above.
func (r *Rand) Gamma(shape float64) float64 {
	switch {
	case shape == 1:
		return r.Exponential()
	case shape == 0:
		return 0
	case shape < 1:
		for {
			u, v := r.Float64(), r.Exponential()
			if u <= 1-shape {
				if x := math.Pow(u, 1/shape); x <= v {
					return x
				}
			} else {
				y := -math.Log((1 - u) / shape)
				if x := math.Pow(1-shape+shape*y, 1/shape); x <= v+y {
					return x
				}
			}
		}
	}
	b := shape - 1.0/3
	c := 1 / math.Sqrt(9*b)
	for {
		var x, v float64
		for {
			x = r.Normal()
			if v = 1 + c*x; v > 0 {
				break
			}
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*(x*x)*(x*x) || math.Log(u) < 0.5*x*x+b*(1-v+math.Log(v)) {
			return b * v
		}
	}
}

// Dirichlet is dirichlet(alpha·1_k) of the legacy generator: k gamma variates, each
// multiplied by the reciprocal of their sum.
func (r *Rand) Dirichlet(alpha float64, k int) []float64 {
	out := make([]float64, k)
	acc := 0.0
	for j := range out {
		out[j] = r.Gamma(alpha)
		acc += out[j]
	}
	inv := 1 / acc
	for j := range out {
		out[j] *= inv
	}
	return out
}
