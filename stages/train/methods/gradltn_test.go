package methods

import (
	"context"
	"math"
	"testing"

	"github.com/fedpipe/fedpipe/stages/train"
)

func TestGradLTNKeepsPToTheL(t *testing.T) {
	_, cfg := methodRun(t, "fedselect", map[string]float64{"p": 0.5, "ltn_iterations": 2, "ltn_epochs": 1},
		map[string]string{"variant": "v1"})
	cfg.Run.Train.Rounds = 2
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Selection) == 0 {
		t.Fatal("no selection rows")
	}
	type rc struct{ r, c int }
	pers, total := map[rc]int{}, map[rc]int{}
	for _, s := range st.Selection {
		pers[rc{s.Round, s.Client}] += s.Personalized
		total[rc{s.Round, s.Client}] += s.Total
	}
	for k, p := range pers {
		// Two halvings of all entries, each rounded: a quarter, within rounding.
		if want := float64(total[k]) / 4; math.Abs(float64(p)-want) > 2 {
			t.Errorf("round %d client %d: %d personalized of %d, want ≈ %.0f", k.r, k.c, p, total[k], want)
		}
	}
}
