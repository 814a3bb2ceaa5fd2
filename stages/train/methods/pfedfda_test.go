package methods

import (
	"math"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/stages/train"
)

// The personal head of pFedFDA with beta = 1 is the closed-form LDA classifier of the
// client's own features: Σ_s·w_c = μ_c and b_c = −½·μ_c·w_c + log π_c, checked by
// multiplying back (no inversion) with statistics computed here from scratch, for every
// class the client holds.
func TestPFedFDAHeadIsLDA(t *testing.T) {
	const shrink, ridge = 0.2, 0.3
	st, cfg := runMLP(t, "pfedfda", map[string]float64{"beta": 1, "shrinkage": shrink, "ridge": ridge}, map[string]string{"beta_mode": "fixed"}, 2)
	m, err := gomlxModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	checked := 0
	for c, p := range st.Personal {
		if p == nil || reflect.DeepEqual(p, initModel(cfg.Run, train.ModelSpec(cfg.Run, cfg.Data))) {
			continue
		}
		trainX, trainY := cfg.Data.Gather(cfg.Assign.Train[c])
		feats, err := m.Features(p, trainX, 7)
		if err != nil {
			t.Fatal(err)
		}
		d, k, n := m.FeatureDim(), cfg.Data.Classes, len(trainY)
		means := make([][]float64, k)
		counts := make([]float64, k)
		for j := range means {
			means[j] = make([]float64, d)
		}
		for i, y := range trainY {
			counts[y]++
			for a := 0; a < d; a++ {
				means[y][a] += float64(feats[i*d+a])
			}
		}
		for j := range means {
			for a := range means[j] {
				if counts[j] > 0 {
					means[j][a] /= counts[j]
				}
			}
		}
		cov := make([]float64, d*d)
		for i, y := range trainY {
			for a := 0; a < d; a++ {
				for b := 0; b < d; b++ {
					cov[a*d+b] += (float64(feats[i*d+a]) - means[y][a]) * (float64(feats[i*d+b]) - means[y][b]) / float64(n)
				}
			}
		}
		tr := 0.0
		for a := 0; a < d; a++ {
			tr += cov[a*d+a]
		}
		w := p[p.Find("classifier.weight")].Data
		bias := p[p.Find("classifier.bias")].Data
		for j := 0; j < k; j++ {
			if counts[j] == 0 {
				continue // a class the client lacks takes the global mean
			}
			dot := 0.0
			for a := 0; a < d; a++ {
				sw := 0.0
				for b := 0; b < d; b++ {
					s := (1 - shrink) * cov[a*d+b]
					if a == b {
						s += shrink*tr/float64(d) + ridge + 1e-6
					}
					sw += s * float64(w[b*k+j])
				}
				if math.Abs(sw-means[j][a]) > 1e-3*(1+math.Abs(means[j][a])) {
					t.Fatalf("client %d class %d: (Σ w)[%d] = %v, μ = %v", c, j, a, sw, means[j][a])
				}
				dot += means[j][a] * float64(w[a*k+j])
			}
			want := -0.5*dot + math.Log((counts[j]+1)/(float64(n)+float64(k)))
			if math.Abs(float64(bias[j])-want) > 1e-3*(1+math.Abs(want)) {
				t.Fatalf("client %d class %d: bias %v, want %v", c, j, bias[j], want)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no client trained")
	}
	// The body is shared: the global body is the size-weighted average of the uploads, so
	// it moved, and the global head is a valid LDA head (finite).
	for _, v := range st.Global[st.Global.Find("classifier.weight")].Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatal("global head not finite")
		}
	}
}

// Cross-validation picks β = 1 when the global estimates are wrong for the client and a
// β < 1 when the client's own estimates are noisy and the global ones are right.
func TestPFedFDABetaCV(t *testing.T) {
	const d, classes = 2, 2
	f := &pFedFDA{shrink: 0, ridge: 0.01}
	r := rngForTest()
	truth := [][]float64{{1, 0}, {-1, 0}}
	sample := func(n int, noise float64) ([]float32, []int32) {
		var x []float32
		var y []int32
		for i := 0; i < n; i++ {
			c := i % classes
			x = append(x, float32(truth[c][0]+noise*r.NormFloat64()), float32(truth[c][1]+noise*r.NormFloat64()))
			y = append(y, int32(c))
		}
		return x, y
	}
	gx, gy := sample(2000, 0.5)
	right := featureStats(gx, gy, d, classes)
	wrong := featureStats(gx, gy, d, classes)
	wrong.means[0], wrong.means[1] = []float64{-1, 0}, []float64{1, 0} // classes swapped
	x, y := sample(40, 0.5)
	perm := r.Perm(len(y))
	if b, err := f.betaCV(x, y, d, classes, wrong, perm, 0.5); err != nil || b != 1 {
		t.Errorf("global means swapped: beta = %v (%v), want 1", b, err)
	}
	x, y = sample(8, 1.5)
	if b, err := f.betaCV(x, y, d, classes, right, r.Perm(len(y)), 0.5); err != nil || b >= 1 {
		t.Errorf("few noisy local samples, right global estimates: beta = %v (%v), want < 1", b, err)
	}
	if b, _ := f.betaCV(x, y, d, classes, nil, r.Perm(len(y)), 0.3); b != 0.3 {
		t.Errorf("no global estimate: beta = %v, want the fallback 0.3", b)
	}
}
