package stats

import (
	"fmt"
	"math"
	"testing"
)

// Values from stats/testdata/reference.py: scipy.stats.permutation_test((d,), np.mean,
// permutation_type='samples', n_resamples=np.inf).pvalue (SciPy 1.10.1) — every sign pattern.
// SciPy refuses one pair; by hand, both patterns of one difference have the same |sum|: p = 1.
func TestSignFlipAgainstSciPy(t *testing.T) {
	for _, c := range []struct {
		d []float64
		p float64
	}{
		{[]float64{0.12, 0.31, -0.05, 0.22}, 0.25},
		{[]float64{0.4, 0.6, 0.5, 0.3, 0.45, 0.55}, 0.03125},
		{[]float64{1, 1, -1, 1}, 0.625}, // ties in |d|: sums equal to the observed count
		{[]float64{0.2, -0.2}, 1},
		{[]float64{0.7}, 1},
	} {
		p, test := SignFlip(c.d)
		near(t, fmt.Sprintf("SignFlip(%v)", c.d), p, c.p, 1e-15)
		if test != TestSignFlip {
			t.Errorf("test %q", test)
		}
	}
	if p, _ := SignFlip(nil); !math.IsNaN(p) {
		t.Errorf("no pairs: %g", p)
	}
}

// Above 20 pairs the sign patterns are drawn: the p-value is deterministic and within
// Monte Carlo error of the exact one (all 2^22 patterns enumerated).
func TestSignFlipMonteCarlo(t *testing.T) {
	d := make([]float64, 22)
	for i := range d {
		d[i] = math.Sin(float64(i)*1.3) + 0.25
	}
	p, test := SignFlip(d)
	if q, _ := SignFlip(d); q != p || test != TestSignFlipMC {
		t.Fatalf("not deterministic or wrong test: %g %g %q", p, q, test)
	}
	obs := 0.0
	for _, x := range d {
		obs += x
	}
	// The enumeration SignFlip uses up to 20 pairs (checked against SciPy above), run on 22.
	exact := signFlipExact(d, math.Abs(obs)-1e-9)
	se := math.Sqrt(exact * (1 - exact) / signFlipDraws)
	if math.Abs(p-exact) > 4*se+1e-5 {
		t.Errorf("Monte Carlo p %g, exact %g (se %g)", p, exact, se)
	}
}

// Values from stats/testdata/reference.py (SciPy 1.10.1):
//   - no ties: scipy.stats.wilcoxon(d, method='exact').pvalue;
//   - ties and zeros: zeros dropped, then scipy.stats.permutation_test((nz,), lambda x:
//     scipy.stats.rankdata(np.abs(x))[x > 0].sum(), permutation_type='samples',
//     n_resamples=np.inf).pvalue, the exact distribution of the midrank sum;
//   - 300 pairs: scipy.stats.wilcoxon(d, zero_method='wilcox', correction=False,
//     method='approx').pvalue with d[i] = ((37·i) mod 11 − 4)·0.25.
func TestSignedRankAgainstSciPy(t *testing.T) {
	p, test := SignedRank([]float64{1.5, -0.4, 2.1, 0.9, 3.3, -1.2, 0.7, 2.8})
	near(t, "no ties", p, 0.078125, 1e-14)
	if test != TestSignedRank {
		t.Errorf("test %q", test)
	}
	p, _ = SignedRank([]float64{0.5, 0.5, -0.5, 1.0, 0.0, 2.0, 2.0, -1.0, 0.5, 3.0, 0.0})
	near(t, "ties and zeros", p, 0.10546875, 1e-14)
	d := make([]float64, 300)
	for i := range d {
		d[i] = float64((37*i)%11-4) * 0.25
	}
	p, test = SignedRank(d)
	near(t, "300 pairs", p, 2.954157897846426e-07, 1e-9)
	if test != TestSignedRankZ {
		t.Errorf("test %q", test)
	}
}

// Hand-worked: one nonzero difference has p = 1 (both signs equally likely, the two-sided
// p is capped); all differences zero is no evidence at all, p = 1; five positive differences
// give 2·(1/32).
func TestSignedRankHandWorked(t *testing.T) {
	for _, c := range []struct {
		d []float64
		p float64
	}{
		{[]float64{0.3}, 1},
		{[]float64{0, 0, 0}, 1},
		{[]float64{1, 2, 3, 4, 5}, 0.0625},
		{[]float64{-1, -2, -3, -4, -5}, 0.0625},
	} {
		p, _ := SignedRank(c.d)
		near(t, fmt.Sprintf("SignedRank(%v)", c.d), p, c.p, 1e-15)
	}
	if p, _ := SignedRank(nil); !math.IsNaN(p) {
		t.Errorf("no pairs: %g", p)
	}
}

// Compare takes b − a, its t interval, and the unit's test.
func TestCompare(t *testing.T) {
	a := []float64{90.0, 90.5, 89.8, 90.2}
	b := []float64{90.12, 90.81, 89.75, 90.42}
	c := Compare(Seeds, a, b)
	// b − a = 0.12, 0.31, −0.05, 0.22 (up to rounding): the first sign-flip case above.
	if c.Unit != Seeds || c.N != 4 || c.Test != TestSignFlip || math.Abs(c.P-0.25) > 1e-12 {
		t.Errorf("seeds: %+v", c)
	}
	near(t, "mean diff", c.Mean, 0.15, 1e-12)
	want := TInterval([]float64{0.12, 0.31, -0.05, 0.22})
	near(t, "lo", c.CI.Lo, want.Lo, 1e-12)
	near(t, "hi", c.CI.Hi, want.Hi, 1e-12)
	c = Compare(Clients, []float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10})
	if c.Unit != Clients || c.Test != TestSignedRank || c.P != 0.0625 || c.Mean != 3 {
		t.Errorf("clients: %+v", c)
	}
	c = Compare(Seeds, []float64{90}, []float64{91})
	if c.N != 1 || c.P != 1 || c.CI.Valid() || c.Mean != 1 {
		t.Errorf("one seed: %+v", c)
	}
}

func TestFormatP(t *testing.T) {
	for p, want := range map[float64]string{0.0078125: "0.00781", 0.5: "0.5", 1: "1", 3e-7: "<0.0001", math.NaN(): "—"} {
		if got := FormatP(p); got != want {
			t.Errorf("FormatP(%g) = %q, want %q", p, got, want)
		}
	}
}

// TestCompareCountsTiesExactly: differences of accuracies that are equal as fractions (1/100
// from 29 → 30 and from 57 → 58 correct of 100; 1/10 and 2/20) tie in CompareCounts, whose
// p-value is SignedRank's on the same differences written exactly (integers), while the
// floating-point differences 100·b − 100·a break some of those ties (29 → 30 gives
// 1.0000000000000036) and give another p; the zero pairs are dropped and counted.
func TestCompareCountsTiesExactly(t *testing.T) {
	type pair struct{ a, b, n int }
	pairs := []pair{{29, 30, 100}, {57, 58, 100}, {12, 13, 100}, {40, 39, 100}, {1, 2, 10}, {2, 4, 20}, {3, 2, 10},
		{70, 73, 100}, {5, 5, 10}, {33, 33, 50}, {81, 80, 100}, {64, 66, 100}, {8, 9, 10}}
	var a, b []Count
	var exact, floating []float64
	for _, p := range pairs {
		a, b = append(a, Count{p.a, p.n}), append(b, Count{p.b, p.n})
		exact = append(exact, float64((p.b-p.a)*(100/p.n))) // hundredths: integers, exact
		floating = append(floating, 100*(float64(p.b)/float64(p.n))-100*(float64(p.a)/float64(p.n)))
	}
	c := CompareCounts(a, b)
	want, _ := SignedRank(exact)
	if c.P != want || c.Test != TestSignedRank || c.Nonzero != 11 || c.Zeros != 2 || c.N != 13 {
		t.Errorf("CompareCounts: p %v (%s), %d nonzero, %d zeros of %d; want p %v, 11 nonzero, 2 zeros of 13", c.P, c.Test, c.Nonzero, c.Zeros, c.N, want)
	}
	if pf, _ := SignedRank(floating); pf == want {
		t.Errorf("the floating-point differences give the same p %v: the case shows no broken tie", pf)
	}
	if bad := CompareCounts([]Count{{1, 10}}, []Count{{2, 20}}); !math.IsNaN(bad.P) {
		t.Errorf("a pair over different test splits: p %v, want NaN", bad.P)
	}
	if none := CompareCounts([]Count{{1, 10}}, []Count{{1, 10}}); none.P != 1 || none.Zeros != 1 {
		t.Errorf("every difference zero: %+v", none)
	}
}

// TestMinP: the smallest p of the exact tests is 2/2ⁿ, so 5 seeds (0.0625) cannot reach 5 %
// and 6 (0.03125) can; the signed-rank test counts its nonzero pairs; SignFlip reaches it.
func TestMinP(t *testing.T) {
	if p := MinP(TestSignFlip, 5); p != 0.0625 {
		t.Errorf("5 seeds: %v", p)
	}
	if p := MinP(TestSignedRank, 6); p != 0.03125 || MinP(TestSignedRank, 0) != 1 || MinP(TestSignedRankZ, 300) != 0 {
		t.Errorf("signed rank: %v", p)
	}
	if p, _ := SignFlip([]float64{1, 2, 3, 4, 5}); p != MinP(TestSignFlip, 5) {
		t.Errorf("five positive differences: p %v, want the minimum %v", p, MinP(TestSignFlip, 5))
	}
}
