package methods

import (
	"errors"
	"math"
	"math/rand/v2"
)

// This file holds the numerics of pFedFDA as its authors' code computes them
// (cj-mclaughlin/pFedFDA clients/client_fedfda.py; FL-bench's src/client/pfedfda.py does the
// same): Gaussian estimates of a client's features, the LDA head of such estimates, and
// the interpolation weights β fitted by cross-validation.

// fdaEps is the authors' ε (client_fedfda.py:13): added to every entry of the covariance,
// to the class priors, and the covariance shrinkage of the LDA head.
const fdaEps = 1e-4

// fdaPSDThreshold is statsmodels' cov_nearest default threshold: the smallest eigenvalue
// a correlation matrix keeps.
const fdaPSDThreshold = 1e-15

// fdaGauss are class means ([classes][d]) and a covariance shared by the classes (d×d
// row-major).
type fdaGauss struct {
	means [][]float64
	cov   []float64
}

// fdaPriors are the class frequencies of y plus ε, renormalized (client_fedfda.py:19-22).
func fdaPriors(y []int32, classes int) []float64 {
	p := make([]float64, classes)
	for _, c := range y {
		p[c]++
	}
	sum := 0.0
	for c := range p {
		if len(y) > 0 {
			p[c] /= float64(len(y))
		}
		p[c] += fdaEps
		sum += p[c]
	}
	for c := range p {
		p[c] /= sum
	}
	return p
}

// fdaMLE is compute_mle_statistics (client_fedfda.py:177-199): the class means (nil where
// there is none), the class counts and the scatter Σ (f − m_y)(f − m_y)ᵀ, each feature
// centred on its class mean or, without one, on the global mean of its class. The authors'
// test `len(labels == y) > min_samples` (:187) measures the whole label array, so every
// present class gets a mean once the client has more than 2 samples: followed unless
// perClass, FL-bench's test, a class's own count above 2 (src/client/pfedfda.py:267-269).
func fdaMLE(feats []float32, y []int32, d, classes int, global [][]float64, perClass bool) (means [][]float64, counts []int, scatter []float64) {
	counts = make([]int, classes)
	for _, c := range y {
		counts[c]++
	}
	means = make([][]float64, classes)
	for c, n := range counts {
		if (perClass && n > 2) || (!perClass && n > 0 && len(y) > 2) {
			means[c] = make([]float64, d)
		}
	}
	for i, c := range y {
		if means[c] == nil {
			continue
		}
		for k, v := range feats[i*d : (i+1)*d] {
			means[c][k] += float64(v)
		}
	}
	for c, m := range means {
		for k := range m {
			m[k] /= float64(counts[c])
		}
	}
	scatter = make([]float64, d*d)
	diff := make([]float64, d)
	for i, c := range y {
		m := means[c]
		if m == nil {
			m = global[c]
		}
		for k, v := range feats[i*d : (i+1)*d] {
			diff[k] = float64(v) - m[k]
		}
		for a, da := range diff {
			if da == 0 {
				continue
			}
			row := scatter[a*d : (a+1)*d]
			for b, db := range diff {
				row[b] += da * db
			}
		}
	}
	return means, counts, scatter
}

// fdaCovariance is the authors' covariance estimate (client_fedfda.py:88-89): scatter/(n−1)
// plus ε on every entry (a scalar broadcast over the matrix, not only its diagonal) plus
// the identity, projected to the nearest positive semi-definite matrix (nearestPSD). A
// single sample divides by 1, not 0 (the authors' code would give infinities).
func fdaCovariance(scatter []float64, n, d int) []float64 {
	cov := make([]float64, d*d)
	for i, v := range scatter {
		cov[i] = v/float64(max(n-1, 1)) + fdaEps
	}
	for i := 0; i < d; i++ {
		cov[i*d+i]++
	}
	return nearestPSD(cov, d)
}

// nearestPSD is statsmodels' cov_nearest(cov, method="clipped"): the covariance's
// correlation matrix, if an eigenvalue is below fdaPSDThreshold, has its eigenvalues
// clipped there and is rescaled to a unit diagonal, and the covariance is rebuilt with
// the original standard deviations; otherwise it comes back unchanged. fdaCovariance's
// matrices (a scatter plus ε·11ᵀ plus I) have eigenvalues of at least 1, so for them this
// is the identity, found by one Cholesky factorization.
func nearestPSD(cov []float64, d int) []float64 {
	std := make([]float64, d)
	for i := range std {
		std[i] = math.Sqrt(cov[i*d+i])
	}
	corr := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			corr[a*d+b] = cov[a*d+b] / (std[a] * std[b])
		}
	}
	probe := append([]float64(nil), corr...)
	for i := 0; i < d; i++ {
		probe[i*d+i] -= fdaPSDThreshold
	}
	if cholesky(probe, d) == nil {
		return cov // no eigenvalue clipped: statsmodels returns the matrix as it was
	}
	vals, vecs := jacobiEigen(corr, d)
	clipped := make([]float64, d*d)
	for k, v := range vals {
		v = math.Max(v, fdaPSDThreshold)
		for a := 0; a < d; a++ {
			for b := 0; b < d; b++ {
				clipped[a*d+b] += v * vecs[a*d+k] * vecs[b*d+k]
			}
		}
	}
	out := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			unit := clipped[a*d+b] / math.Sqrt(clipped[a*d+a]*clipped[b*d+b])
			out[a*d+b] = unit * std[a] * std[b]
		}
	}
	return out
}

// fdaShrink is the LDA's regularization (client_fedfda.py:223):
// (1 − ε)·Σ + ε·tr(Σ)/d·I. It is linear in Σ.
func fdaShrink(cov []float64, d int) []float64 {
	tr := 0.0
	for i := 0; i < d; i++ {
		tr += cov[i*d+i]
	}
	out := make([]float64, len(cov))
	for i, v := range cov {
		out[i] = (1 - fdaEps) * v
	}
	for i := 0; i < d; i++ {
		out[i*d+i] += fdaEps * tr / float64(d)
	}
	return out
}

// fdaHead is set_lda_weights (client_fedfda.py:212-230): the LDA classifier of g with
// priors, w_c = Σ'⁻¹μ_c and b_c = −½·μ_c·w_c + log π_c with Σ' = fdaShrink(Σ) (the
// authors' least-squares solve is this solve: Σ' is positive definite). weight is
// [d, classes] row-major, the layout of classifier.weight.
func fdaHead(g fdaGauss, priors []float64, d int) (weight, bias []float32, err error) {
	return ldaHead(g.means, fdaShrink(g.cov, d), priors, d)
}

// mix returns β_m·local + (1 − β_m)·global for the means and β_c·local + (1 − β_c)·global
// for the covariance (client_fedfda.py:172-173).
func (local fdaGauss) mix(global fdaGauss, betaMeans, betaCov float64) fdaGauss {
	out := fdaGauss{means: make([][]float64, len(local.means)), cov: make([]float64, len(local.cov))}
	for c, m := range local.means {
		out.means[c] = make([]float64, len(m))
		for k, v := range m {
			out.means[c][k] = betaMeans*v + (1-betaMeans)*global.means[c][k]
		}
	}
	for i, v := range local.cov {
		out.cov[i] = betaCov*v + (1-betaCov)*global.cov[i]
	}
	return out
}

// fdaEstimate returns the client's Gaussian estimate from features: the means of fdaMLE
// (where a class has more than minCount samples; else the global mean) and fdaCovariance.
// Training uses minCount 0 (client_fedfda.py:91), evaluation 2 (server_fedfda.py:94);
// perClass as fdaMLE's.
func fdaEstimate(feats []float32, y []int32, d, classes int, global fdaGauss, minCount int, perClass bool) fdaGauss {
	means, counts, scatter := fdaMLE(feats, y, d, classes, global.means, perClass)
	g := fdaGauss{means: make([][]float64, classes), cov: fdaCovariance(scatter, len(y), d)}
	for c := range means {
		if means[c] != nil && counts[c] > minCount {
			g.means[c] = means[c]
		} else {
			g.means[c] = append([]float64(nil), global.means[c]...)
		}
	}
	return g
}

// cvFold is one split of the cross-validation: the estimate from its training part, and
// its held-out features and labels.
type cvFold struct {
	est fdaGauss
	x   []float32
	y   []int32
}

// errBetaFit is returned when the cross-validated loss is not finite.
var errBetaFit = errors.New("pfedfda: beta cross-validation loss not finite")

// cvLoss is the authors' β objective (client_fedfda.py:104-112,148-153): over the folds, the
// sum of the mean cross-entropy on the held-out part of the LDA head of the fold's
// estimate mixed with the global one by β = (β_m, β_c), each clipped to [0, 1]; with its
// gradient in β (zero in a coordinate outside [0, 1], as torch's clip gives). With
// Σ' = shrink(Σ(β_c)), W = Σ'⁻¹μ and b_c = −½μ_c·W_c + log π_c, and G the softmax
// minus the one-hot labels over n: ∂L/∂β_m = Σ_c δμ_c·(Σ'⁻¹A_c − g_c·W_c) and
// ∂L/∂β_c = Σ_c (ΔW_c)·(½g_c·W_c − Σ'⁻¹A_c), where A_c = Σ_i G_ic f_i, g_c = Σ_i G_ic,
// δμ = μ_fold − μ_global and Δ = shrink(Σ_fold − Σ_global).
func cvLoss(folds []cvFold, global fdaGauss, priors []float64, d int, beta [2]float64) (float64, [2]float64, error) {
	var grad [2]float64
	b := [2]float64{math.Min(math.Max(beta[0], 0), 1), math.Min(math.Max(beta[1], 0), 1)}
	classes := len(priors)
	total := 0.0
	for _, f := range folds {
		n := len(f.y)
		if n == 0 {
			continue
		}
		g := f.est.mix(global, b[0], b[1])
		l := fdaShrink(g.cov, d)
		if err := cholesky(l, d); err != nil {
			return 0, grad, err
		}
		w := make([][]float64, classes)
		bias := make([]float64, classes)
		for c, mu := range g.means {
			w[c] = append([]float64(nil), mu...)
			cholSolve(l, d, w[c])
			bias[c] = -0.5*dot(mu, w[c]) + math.Log(priors[c])
		}
		a := make([][]float64, classes)
		for c := range a {
			a[c] = make([]float64, d)
		}
		gb := make([]float64, classes)
		z := make([]float64, classes)
		for i, label := range f.y {
			x := f.x[i*d : (i+1)*d]
			mx := math.Inf(-1)
			for c := range z {
				s := bias[c]
				for k, v := range x {
					s += float64(v) * w[c][k]
				}
				z[c] = s
				mx = math.Max(mx, s)
			}
			lse := 0.0
			for _, s := range z {
				lse += math.Exp(s - mx)
			}
			total += (mx + math.Log(lse) - z[label]) / float64(n)
			for c, s := range z {
				gic := math.Exp(s-mx) / lse
				if int32(c) == label {
					gic--
				}
				gic /= float64(n)
				gb[c] += gic
				for k, v := range x {
					a[c][k] += gic * float64(v)
				}
			}
		}
		delta := make([]float64, d*d)
		for i := range delta {
			delta[i] = f.est.cov[i] - global.cov[i]
		}
		delta = fdaShrink(delta, d)
		dw := make([]float64, d)
		for c := range w {
			u := a[c]
			cholSolve(l, d, u) // Σ'⁻¹A_c
			for k := range u {
				grad[0] += (f.est.means[c][k] - global.means[c][k]) * (u[k] - gb[c]*w[c][k])
			}
			for r := 0; r < d; r++ {
				dw[r] = dot(delta[r*d:(r+1)*d], w[c])
			}
			for k := range u {
				grad[1] += dw[k] * (0.5*gb[c]*w[c][k] - u[k])
			}
		}
	}
	for i := range grad {
		if beta[i] < 0 || beta[i] > 1 {
			grad[i] = 0
		}
	}
	if math.IsNaN(total) || math.IsInf(total, 0) {
		return 0, grad, errBetaFit
	}
	return total, grad, nil
}

// solveBeta is solve_beta (client_fedfda.py:114-165) with its defaults (two β, one for the
// means and one for the covariance): classes with fewer than 2 samples are dropped, the
// rest split into 2 stratified folds (each class's samples shuffled by r and dealt to the
// folds in turn: sklearn's StratifiedKFold balances the same way with its own generator),
// and (β_m, β_c) minimizes cvLoss from (0.5, 0.5) by 10 L-BFGS iterations, then clipped to
// [0, 1]. With nothing left to split it returns (0, 0), with a failed fit prev, as the
// authors' except branches do (:143-146, :164-165). perClass is fdaMLE's.
func solveBeta(feats []float32, y []int32, d, classes int, global fdaGauss, priors []float64, r *rand.Rand, prev [2]float64, perClass bool) [2]float64 {
	byClass := make([][]int, classes)
	for i, c := range y {
		byClass[c] = append(byClass[c], i)
	}
	var fold [2][]int
	for _, idx := range byClass {
		if len(idx) < 2 {
			continue
		}
		perm := r.Perm(len(idx))
		for j, p := range perm {
			fold[j%2] = append(fold[j%2], idx[p])
		}
	}
	if len(fold[0]) == 0 {
		return [2]float64{0, 0}
	}
	gather := func(idx []int) ([]float32, []int32) {
		x := make([]float32, 0, len(idx)*d)
		lab := make([]int32, 0, len(idx))
		for _, i := range idx {
			x = append(x, feats[i*d:(i+1)*d]...)
			lab = append(lab, y[i])
		}
		return x, lab
	}
	folds := make([]cvFold, 2)
	for k := range folds {
		tx, ty := gather(fold[1-k])
		folds[k].x, folds[k].y = gather(fold[k])
		folds[k].est = fdaEstimate(tx, ty, d, classes, global, 0, perClass)
	}
	x, err := lbfgs2(func(b [2]float64) (float64, [2]float64, error) {
		return cvLoss(folds, global, priors, d, b)
	}, [2]float64{0.5, 0.5}, 10, 1e-3)
	if err != nil {
		return prev
	}
	return [2]float64{math.Min(math.Max(x[0], 0), 1), math.Min(math.Max(x[1], 0), 1)}
}
