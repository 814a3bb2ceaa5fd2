package stats

import (
	"fmt"
	"math"
	"testing"
)

// Values from stats/testdata/reference.py: scipy.stats.t.ppf(p, df) and scipy.stats.t.cdf(t, df)
// (SciPy 1.10.1). SciPy's t.ppf is accurate to about 2e-11 relative: at df = 1 it gives
// 12.706204736432095 where the closed form tan(0.475π) is 12.706204736174696, and at df = 9
// scipy.stats.t.sf of its own ppf is 0.025000000002338. Hence the 1e-10 tolerance here and the
// exact closed forms in TestTQuantileClosedForms.
func TestTQuantileAgainstSciPy(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706204736432095},
		{0.975, 2, 4.302652729911275},
		{0.975, 3, 3.182446305284263},
		{0.975, 4, 2.7764451051977987},
		{0.975, 9, 2.2621571627409915},
		{0.975, 29, 2.045229642132703},
		{0.975, 1000, 1.9623390808264074},
		{0.995, 5, 4.032142983557536},
		{0.6, 7, 0.2631668613520166},
	} {
		near(t, fmt.Sprintf("TQuantile(%g, %g)", c.p, c.df), TQuantile(c.p, c.df), c.want, 1e-10)
		near(t, fmt.Sprintf("TQuantile(%g, %g)", 1-c.p, c.df), TQuantile(1-c.p, c.df), -c.want, 1e-10)
	}
	for _, c := range []struct{ x, df, want float64 }{
		{0, 3, 0.5},
		{1, 1, 0.7500000000000002},
		{-2.5, 4, 0.03338327240599406},
		{3.2, 12, 0.9961837305995946},
		{10, 2, 0.9950737714883371},
	} {
		near(t, fmt.Sprintf("TCDF(%g, %g)", c.x, c.df), TCDF(c.x, c.df), c.want, 1e-13)
	}
}

// Hand-worked: t with 1 degree of freedom is Cauchy, quantile tan(π(p − ½)); with 2, the
// quantile is (2p−1)·√(2/(4p(1−p))). Out-of-range arguments are NaN, not a panic.
func TestTQuantileClosedForms(t *testing.T) {
	for _, p := range []float64{0.55, 0.9, 0.975, 0.999} {
		near(t, "Cauchy", TQuantile(p, 1), math.Tan(math.Pi*(p-0.5)), 1e-12)
		near(t, "df=2", TQuantile(p, 2), (2*p-1)*math.Sqrt(2/(4*p*(1-p))), 1e-12)
	}
	// df = 9 (odd): P(T > t) = ½ − (θ + sinθ(c + ⅔c³ + 8/15c⁵ + 16/35c⁷))/π, θ = atan(t/3),
	// c = cos θ; at the 0.975 quantile it is 0.025.
	q := TQuantile(0.975, 9)
	th := math.Atan(q / 3)
	c := math.Cos(th)
	tail := 0.5 - (th+math.Sin(th)*(c+2.0/3*math.Pow(c, 3)+8.0/15*math.Pow(c, 5)+16.0/35*math.Pow(c, 7)))/math.Pi
	near(t, "df=9 tail", tail, 0.025, 1e-13)
	near(t, "normal limit", NormalQuantile(0.975), 1.959963984540054, 1e-15)
	for _, c := range [][2]float64{{0, 3}, {1, 3}, {0.5, 0}, {math.NaN(), 2}} {
		if q := TQuantile(c[0], c[1]); !math.IsNaN(q) {
			t.Errorf("TQuantile(%g, %g) = %g, want NaN", c[0], c[1], q)
		}
	}
}
