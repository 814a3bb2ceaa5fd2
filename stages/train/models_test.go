package train

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/safetensors"
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
)

// tinyImages is a generated image set: n samples of side×side×3, 3 classes, each class a
// brightness pattern (left, middle or right third brighter) plus noise, normalized as if
// pixels had mean 0.5 and std 0.25; clients get consecutive slices, a quarter as test.
func tinyImages(n, side, clients int) (*data.Dataset, *partition.Assignment) {
	r := rand.New(rand.NewPCG(11, 12))
	ds := &data.Dataset{Name: "tiny-images", Shape: []int{side, side, 3}, Classes: 3, PixelMean: []float64{0.5, 0.5, 0.5}, PixelStd: []float64{0.25, 0.25, 0.25}}
	for i := range n {
		y := int32(i % 3)
		for range side {
			for col := range side {
				for range 3 {
					p := 0.3 + 0.1*r.NormFloat64()
					if col*3/side == int(y) {
						p += 0.4
					}
					ds.X = append(ds.X, float32((p-0.5)/0.25))
				}
			}
		}
		ds.Y = append(ds.Y, y)
	}
	a := &partition.Assignment{}
	per := n / clients
	for c := range clients {
		idx := make([]int, per)
		for i := range idx {
			idx[i] = c*per + i
		}
		test := per / 4
		a.Train = append(a.Train, idx[test:])
		a.Test = append(a.Test, idx[:test])
	}
	return ds, a
}

func imageRun(method, arch string) *manifest.Run {
	return &manifest.Run{MethodName: method, Method: method, Seed: 5, Dataset: manifest.DatasetSpec{Name: "tiny-images"},
		Model: manifest.ModelSpec{Arch: arch, BNStats: "local", BNParams: "shared"},
		Train: manifest.TrainSpec{Rounds: 2, Participation: 1, LocalEpochs: 1, BatchSize: 4, LR: 0.05,
			Momentum: 0.5, EvalEvery: 1}}
}

// TestFedAvgResNet18 runs FedAvg with the real ResNet-18 (CIFAR stem) through the train
// stage on a tiny generated image set, with each of the BatchNorm options: bn_stats local
// (the default) keeps every client's running statistics out of aggregation — each client
// is evaluated with the statistics of its own last training — while every trained tensor
// is the global one; averaged leaves nothing per client; bn_params personal keeps γ and β
// per client too.
func TestFedAvgResNet18(t *testing.T) {
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	ds, a := tinyImages(36, 8, 3)
	start := time.Now()
	for _, tc := range []struct{ stats, params string }{{"local", "shared"}, {"averaged", "shared"}, {"averaged", "personal"}} {
		r := imageRun("fedavg", model.ArchResNet18)
		r.Model.BNStats, r.Model.BNParams = tc.stats, tc.params
		if tc.stats == "averaged" {
			r.Train.Rounds = 1
		}
		st, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Metrics) == 0 || st.Metrics[len(st.Metrics)-1].Round != r.Train.Rounds {
			t.Fatalf("%+v: no metrics for the last round", tc)
		}
		if PersonalModels(r) != (tc.stats == "local" || tc.params == "personal") {
			t.Errorf("%+v: PersonalModels = %v", tc, PersonalModels(r))
		}
		models, err := EvalModels(r, st, a.Clients())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Global {
			i := st.Global.Find(p.Name)
			stat := model.IsRunningStat(p.Name)
			base := strings.TrimSuffix(strings.TrimSuffix(p.Name, ".weight"), ".bias")
			affine := !stat && st.Global.Find(base+".running_mean") >= 0
			perClient := (stat && tc.stats == "local") || (affine && tc.params == "personal")
			for c, m := range models {
				same := slices.Equal(m[i].Data, p.Data)
				if perClient == same {
					t.Fatalf("%+v: client %d's %s equals the global one: %v (want %v)", tc, c, p.Name, same, !perClient)
				}
				if perClient {
					own := st.Aux[bnAux][c]
					if j := own.Find(p.Name); j < 0 || !slices.Equal(own[j].Data, m[i].Data) {
						t.Fatalf("%+v: client %d is not evaluated with its own %s", tc, c, p.Name)
					}
				}
			}
		}
	}
	t.Logf("three ResNet-18 runs in %v", time.Since(start))
}

// TestBNLocalStatsLeaveAggregation checks bnKeep on hand-made models: a client starts from
// the global model with its own statistics, and its statistics come back to it, not to
// another client, whatever the server averages.
func TestBNLocalStatsLeaveAggregation(t *testing.T) {
	mk := func(w, mean float32) tensor.List {
		return tensor.List{{Name: "conv1.weight", Shape: []int{1}, Data: []float32{w}},
			{Name: "bn1.weight", Shape: []int{1}, Data: []float32{1}},
			{Name: "bn1.running_mean", Shape: []int{1}, Data: []float32{mean}}}
	}
	st := &State{Global: mk(0, 0)}
	k := bnKeep{Method: fedAvg{}, stats: true}
	k.Init(st, 2)
	st.Aux[bnAux][0] = tensor.List{{Name: "bn1.running_mean", Shape: []int{1}, Data: []float32{7}}}
	got := k.EvalModel(st, 0)
	if want := mk(0, 7); !reflect.DeepEqual(got, want) {
		t.Errorf("client 0 evaluated with %v, want %v", got, want)
	}
	if got := k.EvalModel(st, 1); !reflect.DeepEqual(got, st.Global) {
		t.Errorf("client 1 (never trained) evaluated with %v, want the global model", got)
	}
	if !reflect.DeepEqual(st.Global, mk(0, 0)) {
		t.Error("EvalModel changed the global model")
	}
	if own := k.own(mk(3, 9)); len(own) != 1 || own[0].Name != "bn1.running_mean" {
		t.Errorf("kept %v, want only the running mean", own)
	}
	k.affine = true
	if own := k.own(mk(3, 9)); len(own) != 2 || own[0].Name != "bn1.weight" {
		t.Errorf("kept %v, want γ and the running mean", own)
	}
}

// TestAugmentations: crop and flip are deterministic per (seed, round, client, epoch),
// differ across epochs, and turn every sample into one of its crops (the padding being
// pixel 0) or mirror images; without augment the batches are the data themselves.
func TestAugmentations(t *testing.T) {
	ds, a := tinyImages(12, 5, 1)
	cd := gather(ds, a)
	train := manifest.TrainSpec{Augment: []string{"crop", "flip"}, CropPadding: 2}
	batches := func(seed int64, tr manifest.TrainSpec) [][]float32 {
		aug, err := newAugmenter(tr, ds)
		if err != nil {
			t.Fatal(err)
		}
		l := &Local{data: cd[0], batch: 4, seed: seed, round: 3, client: 0, aug: aug}
		var out [][]float32
		if err := l.Batches(2, "train", func(e int, x []float32, y []int32) error {
			out = append(out, slices.Clone(x))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	first, again, other := batches(1, train), batches(1, train), batches(2, train)
	if !reflect.DeepEqual(first, again) {
		t.Fatal("same seed gave different augmented batches")
	}
	if reflect.DeepEqual(first, other) {
		t.Fatal("different seeds gave the same augmented batches")
	}
	plain := batches(1, manifest.TrainSpec{})
	// Every augmented sample is a padded crop, maybe mirrored, of one training sample; the
	// fill is the normalized value of pixel 0.
	side, size := 5, 5*5*3
	fill := float32(-0.5 / 0.25)
	transform := func(img []float32, dy, dx int, flip bool) []float32 {
		out := make([]float32, size)
		for y := range side {
			for x := range side {
				col := x
				if flip {
					col = side - 1 - x
				}
				sy, sx := y+dy-2, col+dx-2
				for ch := range 3 {
					v := fill
					if sy >= 0 && sy < side && sx >= 0 && sx < side {
						v = img[(sy*side+sx)*3+ch]
					}
					out[(y*side+x)*3+ch] = v
				}
			}
		}
		return out
	}
	var originals [][]float32
	for _, b := range plain[:len(plain)/2] { // epoch 0 covers every sample once
		for s := 0; s < len(b); s += size {
			originals = append(originals, b[s:s+size])
		}
	}
	kinds := map[string]int{}
	var epochs [2][][]float32
	for bi, b := range first {
		e := bi * 2 / len(first)
		for s := 0; s < len(b); s += size {
			got := b[s : s+size]
			epochs[e] = append(epochs[e], got)
			found := false
			for _, orig := range originals {
				for dy := 0; dy <= 4 && !found; dy++ {
					for dx := 0; dx <= 4 && !found; dx++ {
						for _, flip := range []bool{false, true} {
							if slices.Equal(transform(orig, dy, dx, flip), got) {
								found = true
								kinds[map[bool]string{false: "kept", true: "flipped"}[flip]]++
								if dy != 2 || dx != 2 {
									kinds["shifted"]++
								}
								break
							}
						}
					}
				}
			}
			if !found {
				t.Fatalf("augmented sample %d of batch %d is no crop or flip of a training sample", s/size, bi)
			}
		}
	}
	if kinds["flipped"] == 0 || kinds["kept"] == 0 || kinds["shifted"] == 0 {
		t.Errorf("augmentations seen: %v; want flips, unflipped and shifted samples", kinds)
	}
	if reflect.DeepEqual(epochs[0], epochs[1]) {
		t.Error("both epochs saw the same augmented samples")
	}
	flat := &data.Dataset{Name: "synthetic", Shape: []int{60}}
	if _, err := newAugmenter(train, flat); !errors.Is(err, manifest.ErrInvalid) {
		t.Errorf("augmenting flat features: error %v, want ErrInvalid", err)
	}
}

// TestInitFromFile loads initial weights from a safetensors file: every tensor but the
// classifier comes from the file, a classifier of another class count is re-initialized,
// and a missing file, an unknown name and a wrong shape are invalid input naming the file.
func TestInitFromFile(t *testing.T) {
	dir := t.TempDir()
	spec := model.ModelSpec{Arch: model.ArchFedAvgCNN, InputShape: []int{8, 8, 1}, NumClasses: 3}
	other := spec
	other.NumClasses = 5
	r := imageRun("fedavg", spec.Arch)
	write := func(name string, l tensor.List) string {
		var buf bytes.Buffer
		if err := safetensors.Encode(&buf, l); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pretrained := other.Init(99) // a "pretrained" model with 5 classes
	r.Model.Init = write("pretrained.safetensors", pretrained)
	got, err := InitialModel(r, spec)
	if err != nil {
		t.Fatal(err)
	}
	seeded := spec.Init(initSeed(r))
	for i, p := range got {
		want := pretrained[pretrained.Find(p.Name)]
		if strings.HasPrefix(p.Name, "classifier.") {
			want = seeded[i]
		}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("%s: not taken from the right source", p.Name)
		}
	}
	same := spec.Init(98)
	r.Model.Init = write("same.safetensors", same)
	if got, err := InitialModel(r, spec); err != nil || !reflect.DeepEqual(got, same) {
		t.Errorf("a file with the model's own classes: %v", err)
	}
	bad := func(name string, l tensor.List, want string) {
		r.Model.Init = name
		if l != nil {
			r.Model.Init = write(name, l)
		} else {
			r.Model.Init = filepath.Join(dir, name)
		}
		_, err := InitialModel(r, spec)
		if !errors.Is(err, manifest.ErrInvalid) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want ErrInvalid mentioning %q and the file", name, err, want)
		}
	}
	bad("missing.safetensors", nil, "does not exist")
	extra := append(spec.Init(1), tensor.New("fc.weight", 2, 2))
	bad("extra.safetensors", extra, `"fc.weight"`)
	wrong := spec.Init(1)
	wrong[0] = tensor.New("conv1.weight", 3, 3, 1, 32)
	bad("shape.safetensors", wrong, "shape [3 3 1 32]")
	lacking := spec.Init(1)[1:]
	bad("lacking.safetensors", lacking, `lacks "conv1.weight"`)
}
