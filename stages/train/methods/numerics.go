package methods

import "math"

// This file holds the general numerics the methods share, none of them specific to one
// method: a symmetric eigendecomposition (pFedFDA's nearest positive semi-definite
// covariance, fda.go; Floco's projections, floco_flbench.go), a dot product and a
// two-variable L-BFGS (pFedFDA's interpolation weights).

// jacobiEigen returns the eigenvalues of the symmetric a (n×n) and its eigenvectors as the
// columns of vecs, by cyclic Jacobi rotations (a is not modified).
func jacobiEigen(a []float64, n int) (vals, vecs []float64) {
	m := append([]float64(nil), a...)
	vecs = make([]float64, n*n)
	for i := 0; i < n; i++ {
		vecs[i*n+i] = 1
	}
	for sweep := 0; sweep < 100; sweep++ {
		off, norm := 0.0, 0.0
		for p := 0; p < n; p++ {
			for q := 0; q < n; q++ {
				norm += m[p*n+q] * m[p*n+q]
				if p != q {
					off += m[p*n+q] * m[p*n+q]
				}
			}
		}
		if off <= 1e-30*math.Max(norm, 1e-300) {
			break
		}
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				if m[p*n+q] == 0 {
					continue
				}
				theta := (m[q*n+q] - m[p*n+p]) / (2 * m[p*n+q])
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := 0; k < n; k++ { // columns p, q
					mkp, mkq := m[k*n+p], m[k*n+q]
					m[k*n+p], m[k*n+q] = c*mkp-s*mkq, s*mkp+c*mkq
				}
				for k := 0; k < n; k++ { // rows p, q
					mpk, mqk := m[p*n+k], m[q*n+k]
					m[p*n+k], m[q*n+k] = c*mpk-s*mqk, s*mpk+c*mqk
				}
				for k := 0; k < n; k++ {
					vkp, vkq := vecs[k*n+p], vecs[k*n+q]
					vecs[k*n+p], vecs[k*n+q] = c*vkp-s*vkq, s*vkp+c*vkq
				}
			}
		}
	}
	vals = make([]float64, n)
	for i := range vals {
		vals[i] = m[i*n+i]
	}
	return vals, vecs
}

// dot is the dot product of a and b (len(b) ≥ len(a)).
func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// lbfgs2 minimizes fn over two variables from x0 by L-BFGS (two-loop recursion, full
// history) for at most maxIter iterations, stopping when the largest gradient entry is at
// most gtol, as torchmin.minimize(method="l-bfgs", max_iter, gtol) does (the authors'
// solver, client_fedfda.py:157-163). The step size is found by backtracking (halving
// from 1, from min(1, 1/‖g‖₁) on the first iteration, torchmin's first trial step) to
// the Armijo condition, where torchmin uses a strong-Wolfe search: same iteration, same
// stopping rules, a simpler line search.
func lbfgs2(fn func([2]float64) (float64, [2]float64, error), x0 [2]float64, maxIter int, gtol float64) ([2]float64, error) {
	x := x0
	f, g, err := fn(x)
	if err != nil {
		return x, err
	}
	var ss, ys [][2]float64
	t := math.Min(1, 1/(math.Abs(g[0])+math.Abs(g[1])))
	for it := 0; it < maxIter; it++ {
		if math.Max(math.Abs(g[0]), math.Abs(g[1])) <= gtol {
			break
		}
		// two-loop recursion: dir = −H·g
		q := g
		alpha := make([]float64, len(ss))
		for i := len(ss) - 1; i >= 0; i-- {
			rho := 1 / (ys[i][0]*ss[i][0] + ys[i][1]*ss[i][1])
			alpha[i] = rho * (ss[i][0]*q[0] + ss[i][1]*q[1])
			q[0] -= alpha[i] * ys[i][0]
			q[1] -= alpha[i] * ys[i][1]
		}
		if k := len(ss) - 1; k >= 0 {
			gamma := (ss[k][0]*ys[k][0] + ss[k][1]*ys[k][1]) / (ys[k][0]*ys[k][0] + ys[k][1]*ys[k][1])
			q[0] *= gamma
			q[1] *= gamma
		}
		for i := range ss {
			rho := 1 / (ys[i][0]*ss[i][0] + ys[i][1]*ss[i][1])
			bb := rho * (ys[i][0]*q[0] + ys[i][1]*q[1])
			q[0] += ss[i][0] * (alpha[i] - bb)
			q[1] += ss[i][1] * (alpha[i] - bb)
		}
		dir := [2]float64{-q[0], -q[1]}
		gtd := g[0]*dir[0] + g[1]*dir[1]
		if gtd > -1e-9 {
			break
		}
		var xn [2]float64
		var fnew float64
		var gnew [2]float64
		accepted := false
		for ls := 0; ls < 30; ls++ {
			xn = [2]float64{x[0] + t*dir[0], x[1] + t*dir[1]}
			if fnew, gnew, err = fn(xn); err != nil {
				return x, err
			}
			if fnew <= f+1e-4*t*gtd {
				accepted = true
				break
			}
			t /= 2
		}
		if !accepted {
			break
		}
		s := [2]float64{xn[0] - x[0], xn[1] - x[1]}
		y := [2]float64{gnew[0] - g[0], gnew[1] - g[1]}
		if s[0]*y[0]+s[1]*y[1] > 1e-10 {
			ss, ys = append(ss, s), append(ys, y)
		}
		done := math.Max(math.Abs(s[0]), math.Abs(s[1])) <= 1e-9 || math.Abs(fnew-f) <= 1e-9
		x, f, g = xn, fnew, gnew
		t = 1
		if done {
			break
		}
	}
	return x, nil
}
