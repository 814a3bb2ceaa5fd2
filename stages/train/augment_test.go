package train

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/data"
)

// TestAugmentations: crop and flip are deterministic per (seed, round, client, epoch),
// differ across epochs, and turn every sample into one of its crops (the padding being
// pixel 0) or mirror images; without augment the batches are the data themselves.
func TestAugmentations(t *testing.T) {
	ds, a := tinyImages(12, 5, 1)
	cd := clientSet{d: ds, a: a}
	train := manifest.TrainSpec{Augment: []string{"crop", "flip"}, CropPadding: 2}
	batches := func(seed int64, tr manifest.TrainSpec) [][]float32 {
		aug, err := newAugmenter(tr, ds)
		if err != nil {
			t.Fatal(err)
		}
		l := &Local{data: cd.all(0), batch: 4, seed: seed, round: 3, client: 0, aug: aug}
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
