package methods

import (
	"context"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

func TestFedSelectAlphaZeroIsUniformFedAvg(t *testing.T) {
	_, sel := methodRun(t, "fedselect", map[string]float64{"alpha": 0}, nil)
	_, avg := methodRun(t, "fedavg", map[string]float64{"uniform_weights": 1}, nil)
	a, err := train.Run(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	b, err := train.Run(context.Background(), avg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Global, b.Global) || !reflect.DeepEqual(a.Metrics, b.Metrics) {
		t.Error("FedSelect with alpha = 0 differs from FedAvg with uniform weights")
	}
	for _, m := range a.Masks {
		if ones, _ := count(m); ones != 0 {
			t.Fatal("alpha = 0 personalized something")
		}
	}
}

func TestFedSelectMasksGrowAndRespectAlpha(t *testing.T) {
	for _, variant := range []string{"paper", "official"} {
		_, cfg := methodRun(t, "fedselect", map[string]float64{"alpha": 0.3, "p": 0.2, "grow_every": 2},
			map[string]string{"variant": variant})
		cfg.Run.Train.Rounds = 6
		cfg.Run.Train.Participation = 1
		st, snaps := snapshots(t, cfg)
		grew := false
		for r := 1; r < len(snaps); r++ {
			for c := range snaps[r] {
				prev, cur := snaps[r-1][c], snaps[r][c]
				for ti := range cur {
					for i, v := range cur[ti].Data {
						if prev[ti].Data[i] == 1 && v != 1 {
							t.Fatalf("%s: client %d lost a personalized entry in round %d", variant, c, r+1)
						}
						grew = grew || (prev[ti].Data[i] == 0 && v == 1)
					}
				}
			}
		}
		if !grew {
			t.Errorf("%s: no mask ever grew", variant)
		}
		for c, m := range st.Masks {
			ones, total := count(m)
			switch variant {
			case "paper":
				if float64(ones) > 0.3*float64(total) {
					t.Errorf("paper: client %d personalizes %d of %d > alpha", c, ones, total)
				}
			case "official":
				for _, tn := range m {
					if o, _ := count(tensor.List{tn}); !officialGrows(tn) && o != 0 {
						t.Errorf("official: bias %s personalized", tn.Name)
					}
				}
			}
		}
	}
}

func TestFedSelectRandomMatchesCounts(t *testing.T) {
	_, largest := methodRun(t, "fedselect", map[string]float64{"alpha": 0.5, "p": 0.1}, nil)
	_, random := methodRun(t, "fedselect", map[string]float64{"alpha": 0.5, "p": 0.1}, map[string]string{"selection": "random"})
	a, _ := snapshots(t, largest)
	b, _ := snapshots(t, random)
	if len(a.Selection) == 0 || len(a.Selection) != len(b.Selection) {
		t.Fatalf("selection rows %d vs %d", len(a.Selection), len(b.Selection))
	}
	differ := false
	totals := func(rows []train.Selection) map[[2]int]int {
		m := map[[2]int]int{}
		for _, r := range rows {
			m[[2]int{r.Round, r.Client}] += r.Personalized
		}
		return m
	}
	if ta, tb := totals(a.Selection), totals(b.Selection); !reflect.DeepEqual(ta, tb) {
		t.Errorf("personalized counts per round and client differ:\nlargest %v\nrandom  %v", ta, tb)
	}
	for c := range a.Masks {
		differ = differ || !reflect.DeepEqual(a.Masks[c], b.Masks[c])
	}
	if !differ {
		t.Error("random selection chose exactly the largest updates")
	}
}

func TestFixedLayerSplit(t *testing.T) {
	_, cfg := methodRun(t, "fedselect", nil, map[string]string{"fixed_layers": "classifier.bias"})
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for c, m := range st.Masks {
		for _, tn := range m {
			ones, total := count(tensor.List{tn})
			if want := map[bool]int{true: total, false: 0}[tn.Name == "classifier.bias"]; ones != want {
				t.Errorf("client %d %s: %d of %d personalized", c, tn.Name, ones, total)
			}
		}
	}
	// Biases of the classifier never leave the clients: the global copy keeps its initial value.
	init := initModel(cfg.Run, train.ModelSpec(cfg.Run, cfg.Data))
	i := st.Global.Find("classifier.bias")
	if !reflect.DeepEqual(st.Global[i], init[i]) {
		t.Error("a personalized layer reached the server's model")
	}
}
