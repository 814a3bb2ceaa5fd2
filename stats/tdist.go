package stats

import "math"

// Level is the confidence level of every interval in this package, and Alpha = 1 − Level the
// significance level of every test.
const (
	Level = 0.95
	Alpha = 1 - Level
)

// TCDF is the cumulative distribution function of Student's t with df degrees of freedom
// (df > 0), computed from the regularized incomplete beta function.
func TCDF(t, df float64) float64 {
	if math.IsNaN(t) || math.IsNaN(df) || df <= 0 {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		if t > 0 {
			return 1
		}
		return 0
	}
	tail := tTail(math.Abs(t), df)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// TQuantile is the p-quantile of Student's t with df degrees of freedom (0 < p < 1, df > 0):
// the t with TCDF(t, df) = p, found by bisection to the precision of a float64.
func TQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	// Bisection on the upper tail P(T > t) = 1 − p, which keeps its relative precision where
	// the CDF itself is within rounding of 1.
	q := 1 - p
	lo, hi := 0.0, 1.0
	for tTail(hi, df) > q {
		lo, hi = hi, 2*hi
	}
	for i := 0; i < 2000; i++ {
		mid := lo + (hi-lo)/2
		if mid == lo || mid == hi {
			break
		}
		if tTail(mid, df) > q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// tTail is P(T > t) for t ≥ 0.
func tTail(t, df float64) float64 {
	return 0.5 * regIncBeta(df/(df+t*t), df/2, 0.5)
}

// NormalQuantile is the p-quantile of the standard normal distribution.
func NormalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// normalSF is P(Z > z) for a standard normal Z.
func normalSF(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// regIncBeta is the regularized incomplete beta function I_x(a, b), evaluated by its
// continued fraction (modified Lentz), on the side of x where the fraction converges fast.
func regIncBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(x, a, b) / a
	}
	return 1 - front*betaFraction(1-x, b, a)/b
}

// betaFraction evaluates the continued fraction of I_x(a, b) (without its prefactor).
func betaFraction(x, a, b float64) float64 {
	c, d := 1.0, 1/nonTiny(1-(a+b)*x/(a+1))
	f := d
	for m := 1; m <= 10000; m++ {
		fm := float64(m)
		even := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		odd := -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		var delta float64
		c, d, delta = lentz(even, c, d)
		f *= delta
		c, d, delta = lentz(odd, c, d)
		f *= delta
		if math.Abs(delta-1) < 1e-16 {
			break
		}
	}
	return f
}

// lentz is one step of the modified Lentz algorithm with numerator num: the new c and d
// and the factor the fraction's value is multiplied by.
func lentz(num, c, d float64) (float64, float64, float64) {
	d = 1 / nonTiny(1+num*d)
	c = nonTiny(1 + num/c)
	return c, d, c * d
}

// nonTiny keeps a Lentz term away from zero.
func nonTiny(v float64) float64 {
	if math.Abs(v) < 1e-300 {
		return 1e-300
	}
	return v
}
