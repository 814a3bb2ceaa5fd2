package train

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// methodRun is tinyRun with the method's catalogue defaults and the given overrides.
func methodRun(t *testing.T, method string, params map[string]float64, options map[string]string) (*manifest.Run, Config) {
	t.Helper()
	r, ds, a := tinyRun(method)
	r.Params, r.Options = map[string]float64{}, map[string]string{}
	for _, p := range manifest.Methods[method].Params {
		if p.Choices != nil {
			r.Options[p.Name] = p.Choices[0]
		} else {
			r.Params[p.Name] = p.Default
		}
	}
	for k, v := range params {
		r.Params[k] = v
	}
	for k, v := range options {
		r.Options[k] = v
	}
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	return r, Config{Run: r, Data: ds, Assign: a, Backend: backend}
}

// snapshots runs cfg and returns the masks after every round.
func snapshots(t *testing.T, cfg Config) (*State, [][]tensor.List) {
	t.Helper()
	var snaps [][]tensor.List
	cfg.Run.Train.CheckpointEvery = 1
	cfg.Checkpoint = func(st *State) error {
		masks := make([]tensor.List, len(st.Masks))
		for c, m := range st.Masks {
			masks[c] = m.Clone()
		}
		snaps = append(snaps, masks)
		return nil
	}
	st, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st, append(snaps, st.Masks)
}

func TestFedSelectAlphaZeroIsUniformFedAvg(t *testing.T) {
	_, sel := methodRun(t, "fedselect", map[string]float64{"alpha": 0}, nil)
	_, avg := methodRun(t, "fedavg", map[string]float64{"uniform_weights": 1}, nil)
	a, err := Run(context.Background(), sel)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), avg)
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
	totals := func(rows []Selection) map[[2]int]int {
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

func TestFedOBPQuantileOnePersonalizesNothing(t *testing.T) {
	_, cfg := methodRun(t, "fedobp", map[string]float64{"q": 1}, nil)
	st, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Selection) == 0 {
		t.Fatal("no selection rows")
	}
	for _, s := range st.Selection {
		if s.Personalized != 0 {
			t.Fatalf("q = 1 personalized %d entries of %s", s.Personalized, s.Tensor)
		}
	}
	_, cfg = methodRun(t, "fedobp", map[string]float64{"q": 0.9}, nil)
	st, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	any := false
	for _, s := range st.Selection {
		any = any || s.Personalized > 0
	}
	if !any {
		t.Error("q = 0.9 personalized nothing after clients trained")
	}
}

// The personalized count equals the number of scores strictly above the interpolated
// quantile, computed by hand.
func TestFedOBPSelectionMatchesQuantile(t *testing.T) {
	score := tensor.List{
		{Name: "fc1.weight", Shape: []int{5}, Data: []float32{0.1, 0.5, 0.2, 0.9, 0.3}},
		{Name: "classifier.weight", Shape: []int{5}, Data: []float32{0.7, 0.4, 0.8, 0.6, 0.0}},
	}
	// Sorted: 0 .1 .2 .3 .4 .5 .6 .7 .8 .9; q = 0.75 → h = 6.75 → τ = 0.6 + 0.75·0.1 = 0.675:
	// above it 0.7, 0.8, 0.9.
	f := &fedOBP{q: 0.75}
	mask := f.selectMask(score)
	if ones, _ := count(mask); ones != 3 {
		t.Errorf("q = 0.75: %d personalized, want 3", ones)
	}
	if mask[0].Data[3] != 1 || mask[1].Data[0] != 1 || mask[1].Data[2] != 1 {
		t.Errorf("wrong entries: %v", mask)
	}
	// Only the classifier: its scores 0 .4 .6 .7 .8, q = 0.5 → τ = 0.6: above it 0.7, 0.8.
	f = &fedOBP{q: 0.5, clsOnly: true}
	mask = f.selectMask(score)
	if ones, _ := count(mask); ones != 2 || mask[0].Data[3] != 0 {
		t.Errorf("cls_only: %v", mask)
	}
	// Ties at τ stay global.
	tied := tensor.List{{Name: "classifier.weight", Shape: []int{4}, Data: []float32{1, 1, 1, 1}}}
	if ones, _ := count((&fedOBP{q: 0.5}).selectMask(tied)); ones != 0 {
		t.Errorf("ties at tau personalized %d", ones)
	}
}

func TestMaskedAverageCounts(t *testing.T) {
	m := func(v ...float32) tensor.List { return tensor.List{{Name: "w", Shape: []int{3}, Data: v}} }
	models := []tensor.List{m(1, 2, 3), m(5, 6, 7)}
	masks := []tensor.List{m(0, 1, 1), m(0, 0, 1)}
	got, err := MaskedAverage(models, masks, []float64{1, 1}, m(-1, -1, -1))
	if err != nil {
		t.Fatal(err)
	}
	// Entry 0: both share → 3; entry 1: only model 1 → 6; entry 2: nobody → old −1.
	if want := []float32{3, 6, -1}; !reflect.DeepEqual(got[0].Data, want) {
		t.Errorf("masked average %v, want %v", got[0].Data, want)
	}
}

// The evaluate stage's final figures equal the training loop's last evaluation, before and
// after fine-tuning; before fine-tuning equals a plain evaluation (the run without
// fine-tuning), and fine-tuning changes the after figures.
func TestFinalEvaluationMatchesLastRound(t *testing.T) {
	var first []Metric
	for _, ft := range []int{0, 1} {
		r, cfg := methodRun(t, "fedobp", map[string]float64{"q": 0.9}, nil)
		r.Train.FinetuneEpochs = ft
		st, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		models, err := EvalModels(r, st, cfg.Assign.Clients())
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.NewModel(cfg.Backend, ModelSpec(r, cfg.Data))
		if err != nil {
			t.Fatal(err)
		}
		final, after, err := EvaluateFinal(m, r, cfg.Data, cfg.Assign, models, nil)
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		var last, lastFT []Metric
		for _, row := range st.Metrics {
			if row.Round == r.Train.Rounds && row.Split == "test" {
				last = append(last, row)
			}
			if row.Round == r.Train.Rounds && row.Split == SplitTestFT {
				row.Split = "test"
				lastFT = append(lastFT, row)
			}
		}
		if !reflect.DeepEqual(last, final) {
			t.Errorf("finetune %d: evaluate stage %+v\ntraining's last round %+v", ft, final, last)
		}
		if !reflect.DeepEqual(lastFT, after) {
			t.Errorf("finetune %d: evaluate stage after fine-tuning %+v\ntraining's last round %+v", ft, after, lastFT)
		}
		switch {
		case ft == 0 && after != nil:
			t.Error("figures after fine-tuning of a run that does not fine-tune")
		case ft == 0:
			first = final
		case !reflect.DeepEqual(first, final):
			// Before fine-tuning is a plain evaluation of the model the method holds.
			t.Errorf("before fine-tuning %+v differs from the run without fine-tuning %+v", final, first)
		case reflect.DeepEqual(first, after):
			t.Error("fine-tuning changed nothing")
		}
	}
}

func TestPerLayerThresholdAndFedDPA(t *testing.T) {
	score := tensor.List{
		{Name: "fc1.weight", Shape: []int{4}, Data: []float32{1, 2, 3, 4}},
		{Name: "classifier.weight", Shape: []int{4}, Data: []float32{10, 20, 30, 40}},
	}
	// Per tensor, q = 0.5 → τ = 2.5 and 25: the top two of each.
	mask := (&fedOBP{q: 0.5, perLayer: true}).selectMask(score)
	if want := []float32{0, 0, 1, 1}; !reflect.DeepEqual(mask[0].Data, want) || !reflect.DeepEqual(mask[1].Data, want) {
		t.Errorf("per-layer mask %v", mask)
	}
	// One global threshold would keep only the classifier.
	if mask := (&fedOBP{q: 0.5}).selectMask(score); !reflect.DeepEqual(mask[0].Data, []float32{0, 0, 0, 0}) {
		t.Errorf("global mask %v", mask)
	}
	_, cfg := methodRun(t, "feddpa", nil, nil)
	cfg.Run.Train.Rounds = 3
	cfg.Run.Train.Participation = 1
	st, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// After round 1 every client has trained, so rounds 2 and 3 keep about 60% of each
	// tensor (entries above its 0.4-quantile of Fisher information).
	for _, s := range st.Selection {
		if s.Round < 2 {
			continue
		}
		frac := float64(s.Personalized) / float64(s.Total)
		if frac < 0.4 || frac > 0.61 {
			t.Errorf("round %d client %d %s: %.2f personalized", s.Round, s.Client, s.Tensor, frac)
		}
	}
}

func TestGradLTNKeepsPToTheL(t *testing.T) {
	_, cfg := methodRun(t, "fedselect", map[string]float64{"p": 0.5, "ltn_iterations": 2, "ltn_epochs": 1},
		map[string]string{"variant": "v1"})
	cfg.Run.Train.Rounds = 2
	st, err := Run(context.Background(), cfg)
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

func TestFixedLayerSplit(t *testing.T) {
	_, cfg := methodRun(t, "fedselect", nil, map[string]string{"fixed_layers": "classifier.bias"})
	st, err := Run(context.Background(), cfg)
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
	init := ModelSpec(cfg.Run, cfg.Data).Init(initSeed(cfg.Run))
	i := st.Global.Find("classifier.bias")
	if !reflect.DeepEqual(st.Global[i], init[i]) {
		t.Error("a personalized layer reached the server's model")
	}
}
