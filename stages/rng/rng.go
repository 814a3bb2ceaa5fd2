// Package rng derives every random stream of a run from (seed, round, client, purpose), so
// that no stream depends on how many numbers another stream drew or in which order stages
// and clients ran.
package rng

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// Global marks a stream that belongs to no single client (use as client) or no round.
const Global = -1

// New returns the stream for (seed, round, client, purpose). Streams with different
// arguments are independent; the same arguments always give the same numbers.
func New(seed int64, round, client int, purpose string) *rand.Rand {
	h := sha256.Sum256(fmt.Appendf(nil, "fedpipe-rng/1\x00%d\x00%d\x00%d\x00%s", seed, round, client, purpose))
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])))
}

// Seed derives a 64-bit seed for (seed, round, client, purpose), for code that seeds its
// own generator (model initialization).
func Seed(seed int64, round, client int, purpose string) uint64 {
	h := sha256.Sum256(fmt.Appendf(nil, "fedpipe-seed/1\x00%d\x00%d\x00%d\x00%s", seed, round, client, purpose))
	return binary.LittleEndian.Uint64(h[:8])
}

// Gamma draws from Gamma(shape, 1) (Marsaglia and Tsang; shape < 1 by boosting).
func Gamma(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := r.Float64()
		for u == 0 {
			u = r.Float64()
		}
		return Gamma(r, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		var x, v float64
		for {
			x = r.NormFloat64()
			v = 1 + c*x
			if v > 0 {
				break
			}
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x {
			return d * v
		}
		if u > 0 && math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// Dirichlet draws a probability vector from the symmetric Dirichlet(alpha) over k outcomes.
func Dirichlet(r *rand.Rand, alpha float64, k int) []float64 {
	p := make([]float64, k)
	sum := 0.0
	for i := range p {
		p[i] = Gamma(r, alpha)
		sum += p[i]
	}
	if sum == 0 {
		// All draws underflowed (tiny alpha): put the mass on one outcome.
		p[r.IntN(k)] = 1
		return p
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}
