package train

import (
	"math/rand/v2"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
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

// all returns both of client c's splits.
func (cs clientSet) all(c int) clientData {
	cd := cs.train(c)
	cd.testX, cd.testY = cs.test(c)
	return cd
}

// runMethod is NewRunMethod(r), failing t when it fails.
func runMethod(t testing.TB, r *manifest.Run) Method {
	t.Helper()
	m, err := NewRunMethod(r)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
