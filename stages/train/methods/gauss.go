package methods

import (
	"fmt"
	"math"
)

// classStats are the class-conditional statistics of a set of feature vectors.
type classStats struct {
	d, classes int
	// counts[c] is the number of samples of class c; n their sum.
	counts []float64
	n      float64
	// means is [classes][d] (a class without samples has a zero mean).
	means [][]float64
	// cov is the tied within-class covariance, d×d row-major: the mean over all samples of
	// (f − μ_y)(f − μ_y)ᵀ.
	cov []float64
	// sqnorm is the mean over samples of ‖f‖² (FedPAC's variance term).
	sqnorm float64
}

// featureMoments computes the class statistics of feats ([n, d] row-major) with labels y,
// leaving cov zero unless withCov.
func featureMoments(feats []float32, y []int32, d, classes int, withCov bool) *classStats {
	s := &classStats{d: d, classes: classes, counts: make([]float64, classes), means: make([][]float64, classes), cov: make([]float64, d*d)}
	for c := range s.means {
		s.means[c] = make([]float64, d)
	}
	for i, label := range y {
		s.counts[label]++
		f := feats[i*d : (i+1)*d]
		for k, v := range f {
			s.means[label][k] += float64(v)
			s.sqnorm += float64(v) * float64(v)
		}
	}
	s.n = float64(len(y))
	for c := range s.means {
		if s.counts[c] > 0 {
			for k := range s.means[c] {
				s.means[c][k] /= s.counts[c]
			}
		}
	}
	if s.n == 0 {
		return s
	}
	s.sqnorm /= s.n
	if !withCov {
		return s
	}
	diff := make([]float64, d)
	for i, label := range y {
		f := feats[i*d : (i+1)*d]
		for k, v := range f {
			diff[k] = float64(v) - s.means[label][k]
		}
		for a := 0; a < d; a++ {
			if diff[a] == 0 {
				continue
			}
			row := s.cov[a*d : (a+1)*d]
			for b, db := range diff {
				row[b] += diff[a] * db
			}
		}
	}
	for i := range s.cov {
		s.cov[i] /= s.n
	}
	return s
}

// cholesky factors the symmetric positive definite a (n×n, row-major) in place into its
// lower-triangular factor L (a = L·Lᵀ); the upper triangle is left unspecified.
func cholesky(a []float64, n int) error {
	for j := 0; j < n; j++ {
		s := a[j*n+j]
		for k := 0; k < j; k++ {
			s -= a[j*n+k] * a[j*n+k]
		}
		if s <= 0 || math.IsNaN(s) {
			return fmt.Errorf("covariance not positive definite (pivot %d: %g)", j, s)
		}
		a[j*n+j] = math.Sqrt(s)
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for k := 0; k < j; k++ {
				s -= a[i*n+k] * a[j*n+k]
			}
			a[i*n+j] = s / a[j*n+j]
		}
	}
	return nil
}

// cholSolve solves L·Lᵀ·x = b for the factor from cholesky, in place in b.
func cholSolve(l []float64, n int, b []float64) {
	for i := 0; i < n; i++ {
		s := b[i]
		for k := 0; k < i; k++ {
			s -= l[i*n+k] * b[k]
		}
		b[i] = s / l[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for k := i + 1; k < n; k++ {
			s -= l[k*n+i] * b[k]
		}
		b[i] = s / l[i*n+i]
	}
}

// ldaHead returns the linear discriminant classifier of Gaussian classes with means μ_c, a
// shared covariance Σ (already regularized) and priors π_c: the logits
//
//	w_cᵀf + b_c with w_c = Σ⁻¹μ_c and b_c = −½·μ_cᵀΣ⁻¹μ_c + log π_c
//
// are the class log-posteriors up to a common term. weight is [d, classes] row-major (the
// layout of classifier.weight), bias [classes].
func ldaHead(means [][]float64, cov []float64, priors []float64, d int) (weight, bias []float32, err error) {
	l := append([]float64(nil), cov...)
	if err := cholesky(l, d); err != nil {
		return nil, nil, err
	}
	classes := len(means)
	weight, bias = make([]float32, d*classes), make([]float32, classes)
	for c, mu := range means {
		w := append([]float64(nil), mu...)
		cholSolve(l, d, w)
		dot := 0.0
		for k, v := range w {
			weight[k*classes+c] = float32(v)
			dot += v * mu[k]
		}
		bias[c] = float32(-0.5*dot + math.Log(priors[c]))
	}
	return weight, bias, nil
}
