package shift

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func testImage(c int) *Image {
	img := &Image{H: 28, W: 28, C: c, Pix: make([]float64, 28*28*c)}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		// A smooth pattern plus texture, so blurs and pixelation change something.
		y, x := (i/c)/28, (i/c)%28
		img.Pix[i] = clip01(0.5 + 0.3*math.Sin(float64(x)/3)*math.Cos(float64(y)/4) + 0.1*r.NormFloat64())
	}
	return img
}

func apply(name string, c, severity int, seed uint64) *Image {
	img := testImage(c)
	Corruptions[name](img, severity, rand.New(rand.NewPCG(seed, 9)))
	return img
}

func meanAbsChange(a, b *Image) float64 {
	s := 0.0
	for i := range a.Pix {
		s += math.Abs(a.Pix[i] - b.Pix[i])
	}
	return s / float64(len(a.Pix))
}

// Every corruption is deterministic per seed, keeps pixels in [0, 1], and changes the
// image more at each higher severity.
func TestCorruptionsDeterministicAndMonotone(t *testing.T) {
	for _, name := range Names() {
		for _, c := range []int{1, 3} {
			if !reflect.DeepEqual(apply(name, c, 3, 5), apply(name, c, 3, 5)) {
				t.Errorf("%s: same seed, different images", name)
			}
			clean := testImage(c)
			prev := 0.0 // severity 1 must already change the image
			for s := 1; s <= 5; s++ {
				img := apply(name, c, s, 5)
				for _, v := range img.Pix {
					if v < 0 || v > 1 || math.IsNaN(v) {
						t.Fatalf("%s severity %d: pixel %v", name, s, v)
					}
				}
				d := meanAbsChange(clean, img)
				if d <= prev {
					t.Errorf("%s (C=%d): mean |change| %.4f at severity %d, not above %.4f at %d", name, c, d, s, prev, s-1)
				}
				prev = d
			}
		}
	}
}
