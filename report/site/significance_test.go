package site

import (
	"math"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stats"
)

// handBuilt is a results table of one column: per method, its final pooled accuracy by seed
// (fractions) and, per seed, its clients' accuracies.
func handBuilt(values map[string][]float64, clients map[string][][]float64) *collected {
	c := &collected{cols: []string{""}}
	for _, m := range []string{"A", "B", "C"} {
		if values[m] == nil {
			continue
		}
		c.rows = append(c.rows, m)
		for seed, v := range values[m] {
			x := &run{r: &manifest.Run{MethodName: m, Seed: int64(seed)}, row: m, summary: &results.Summary{Pooled: v, Mean: v, TestSamples: 1000}}
			if clients != nil {
				for i, a := range clients[m][seed] {
					x.clients = append(x.clients, results.Client{Client: i, Accuracy: a})
				}
			}
			c.runs = append(c.runs, x)
		}
	}
	return c
}

// sevenSeeds is the column of TestMarksOverSeeds: A, B and C over seven seeds.
func sevenSeeds() *collected {
	a := []float64{0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96}
	d := []float64{0.3, -0.1, 0.2, -0.2, 0.1, -0.25, 0.05}
	var b, cc []float64
	for i, v := range a {
		b = append(b, v-0.01*float64(i+1))
		cc = append(cc, v-d[i]/100)
	}
	return handBuilt(map[string][]float64{"A": a, "B": b, "C": cc}, nil)
}

// Seven seeds: B is below A on every seed (exact sign-flip p = 2/2⁷ = 0.015625), C differs from
// A by d = (0.3, −0.1, 0.2, −0.2, 0.1, −0.25, 0.05) points (p = 0.921875, SciPy 1.10.1:
// scipy.stats.permutation_test((d,), np.mean, permutation_type='samples',
// n_resamples=np.inf).pvalue). Holm over the two: B 2·0.015625 = 0.03125 (worse), C
// max(0.03125, 0.921875) (not significantly different).
func TestMarksOverSeeds(t *testing.T) {
	c := sevenSeeds()
	m := c.marks("final_pooled", stats.Seeds)
	if !m[[2]string{"A", ""}].best || m[[2]string{"A", ""}].vs != vsBest {
		t.Errorf("A: %+v", m[[2]string{"A", ""}])
	}
	if got := m[[2]string{"B", ""}]; got.vs != vsWorse || math.Abs(got.p-0.03125) > 1e-12 {
		t.Errorf("B: %+v", got)
	}
	if got := m[[2]string{"C", ""}]; got.vs != vsNotSig || math.Abs(got.p-0.921875) > 1e-12 {
		t.Errorf("C: %+v", got)
	}
	g, tab := c.results("final_pooled", stats.Seeds)
	if txt := g.rows[2][1].text; !strings.HasSuffix(txt, "over seeds †") || g.rows[1][1].bold || !g.rows[0][1].bold {
		t.Errorf("cells: %+v", g.rows)
	}
	var page strings.Builder
	g.html(&page)
	if !strings.Contains(page.String(), "<td><strong>93.00</strong> ± 2.00 (n=7) [") {
		t.Errorf("the page does not set the best mean in bold:\n%s", page.String())
	}
	var md strings.Builder
	g.markdown(&md)
	if !strings.Contains(md.String(), "| A | **93.00** ± 2.00 (n=7) [") {
		t.Errorf("the markdown does not set the best mean in bold:\n%s", md.String())
	}
	if vs := tab.Col("vs_best"); vs == nil || strings.Join(vs.String, ",") != "best,significantly worse,not significantly different" {
		t.Errorf("vs_best column: %+v", vs)
	}
	want := stats.TInterval([]float64{90, 91, 92, 93, 94, 95, 96})
	if lo := tab.Col("ci95_lo_pct").Float64[0]; math.Abs(lo-want.Lo) > 1e-9 || tab.Col("ci95_over").String[0] != "seeds" {
		t.Errorf("A's interval %g, want %g", lo, want.Lo)
	}
}

// Over clients (one seed, six clients): B is below A on every client (exact signed-rank
// p = 2/2⁶ = 0.03125), C equal to A but for one client (p = 1). Holm: B 2·0.03125 = 0.0625:
// with six clients and two comparisons no outcome could reach 5 %, so neither is marked
// (untestable, no †), rather than "not significantly different". One seed: the cell shows its
// test-set interval (Wilson over 1000 pooled samples), not one over seeds.
func TestMarksOverClientsOneSeed(t *testing.T) {
	ca := []float64{0.9, 0.8, 0.85, 0.7, 0.95, 0.75}
	var cb, cc []float64
	for i, v := range ca {
		cb = append(cb, v-0.01*float64(i+1))
		cc = append(cc, v)
	}
	cc[3] -= 0.05
	c := handBuilt(map[string][]float64{"A": {0.9}, "B": {0.85}, "C": {0.88}},
		map[string][][]float64{"A": {ca}, "B": {cb}, "C": {cc}})
	m := c.marks("final_pooled", stats.Clients)
	if got := m[[2]string{"B", ""}]; got.vs != vsUntestable || math.Abs(got.p-0.0625) > 1e-12 {
		t.Errorf("B: %+v", got)
	}
	if got := m[[2]string{"C", ""}]; got.vs != vsUntestable || got.p != 1 {
		t.Errorf("C: %+v", got)
	}
	g, tab := c.results("final_pooled", stats.Clients)
	w := stats.Wilson(900, 1000)
	if txt := g.rows[0][1].text; !strings.Contains(txt, "(n=1)") || !strings.Contains(txt, "test set (Wilson, 1000 test samples)") {
		t.Errorf("A: %q", txt)
	}
	if lo := tab.Col("ci95_lo_pct").Float64[0]; math.Abs(lo-100*w.Lo) > 1e-9 || tab.Col("ci95_over").String[0] != "test set" {
		t.Errorf("A's test-set interval %g, want %g", lo, 100*w.Lo)
	}
	// Over seeds, one seed each: sign-flip p = 1 whatever the numbers: untestable, no mark.
	for k, mk := range c.marks("final_pooled", stats.Seeds) {
		if !mk.best && (mk.vs != vsUntestable || mk.p != 1) {
			t.Errorf("%v: %+v", k, mk)
		}
	}
}

// The pairwise table holds every two methods of the column with the stats package's
// comparison and Holm over the column's three pairs: A–B and A–C as in TestMarksOverSeeds
// (p 0.015625 and 0.921875 from SciPy).
func TestPairwiseTable(t *testing.T) {
	c := sevenSeeds()
	grids, rows := c.pairwise("final_pooled", stats.Seeds)
	if len(grids) != 1 || len(rows) != 3 || len(grids[0].rows) != 3 {
		t.Fatalf("%d grids, %d rows", len(grids), len(rows))
	}
	// C − B on seed i is (i+1) − dᵢ points, all positive: p = 2/2⁷. Holm over the three
	// sorted p-values 0.015625, 0.015625, 0.921875: 3·, 2· (then monotone), 1·.
	for i, want := range []struct {
		a, b    string
		p, holm float64
	}{
		{"A", "B", 0.015625, 0.046875},
		{"A", "C", 0.921875, 0.921875},
		{"B", "C", 0.015625, 0.046875},
	} {
		r := rows[i]
		if r.A != want.a || r.B != want.b || r.N != 7 || r.Over != "seeds" || math.Abs(r.P-want.p) > 1e-12 || math.Abs(r.PHolm-want.holm) > 1e-12 {
			t.Errorf("row %d: %+v, want %+v", i, r, want)
		}
	}
	if math.Abs(rows[0].Diff-(-4)) > 1e-9 || grids[0].rows[0][4].text != "-4.00" {
		t.Errorf("A–B mean difference %g (%q), want −4.00", rows[0].Diff, grids[0].rows[0][4].text)
	}
}
