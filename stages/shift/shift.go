package shift

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/rng"
)

// MixDegree returns client c's test set under shift degree d: round(d·n) of its n test
// samples, chosen at random, are replaced by samples drawn without replacement from pool,
// the pooled test data of all clients (DM-PFL Table 1). d = 0 returns own unchanged.
func MixDegree(own, pool []int, d float64, seed int64, client int) []int {
	k := int(math.Round(d * float64(len(own))))
	if k == 0 {
		return own
	}
	r := rng.New(seed, rng.Global, client, fmt.Sprintf("shift/degree/%v", d))
	out := append([]int(nil), own...)
	replace := r.Perm(len(own))[:k]
	draw := r.Perm(len(pool))
	for i, pos := range replace {
		out[pos] = pool[draw[i%len(draw)]]
	}
	return out
}

// Corrupt applies the named corruption at severity to samples x (NHWC, normalized as ds
// normalizes), each sample with its own stream (seed, client, name/severity), and returns
// the corrupted copy.
func Corrupt(ds *data.Dataset, x []float32, name string, severity int, seed int64, client int) ([]float32, error) {
	f, ok := Corruptions[name]
	if !ok {
		return nil, fmt.Errorf("unknown corruption %q", name)
	}
	if !ds.IsImage() {
		return nil, fmt.Errorf("corruptions need image data; %s has samples of shape %v", ds.Name, ds.Shape)
	}
	h, w, c := ds.Shape[0], ds.Shape[1], ds.Shape[2]
	size := h * w * c
	out := make([]float32, len(x))
	img := &Image{H: h, W: w, C: c, Pix: make([]float64, size)}
	r := rng.New(seed, rng.Global, client, fmt.Sprintf("shift/%s/%d", name, severity))
	for s := 0; s < len(x)/size; s++ {
		img.Pix = img.Pix[:size]
		for i, v := range x[s*size : (s+1)*size] {
			img.Pix[i] = clip01(float64(v)*ds.PixelStd[i%c] + ds.PixelMean[i%c])
		}
		f(img, severity, rand.New(rand.NewPCG(r.Uint64(), r.Uint64())))
		for i, p := range img.Pix {
			out[s*size+i] = float32((p - ds.PixelMean[i%c]) / ds.PixelStd[i%c])
		}
	}
	return out, nil
}
