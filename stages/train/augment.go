package train

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/data"
)

// augmenter applies train.augment to training mini-batches of NHWC images, as
// torchvision's RandomCrop(size, padding=p) followed by RandomHorizontalFlip() would on
// each sample: crop picks the top-left corner of an H×W window uniformly in the image
// zero-padded by p pixels on every side ([0, 2p] each way); flip mirrors the columns with
// probability ½. torchvision pads the raw image, so the padding is pixel value 0: in the
// normalized data fedpipe trains on that is (0 − mean)/std, fill per channel.
type augmenter struct {
	crop, flip bool
	pad        int
	h, w, c    int
	fill       []float32
	buf        []float32 // one sample
}

// newAugmenter returns the augmenter of the train spec on the dataset, or nil when the run
// does not augment.
func newAugmenter(t manifest.TrainSpec, d *data.Dataset) (*augmenter, error) {
	if len(t.Augment) == 0 {
		return nil, nil
	}
	if len(d.Shape) != 3 {
		return nil, fmt.Errorf("%w: train.augment %v needs image data [H, W, C]; %s has samples shaped %v: remove train.augment",
			manifest.ErrInvalid, t.Augment, d.Name, d.Shape)
	}
	a := &augmenter{crop: slices.Contains(t.Augment, "crop"), flip: slices.Contains(t.Augment, "flip"),
		pad: t.CropPadding, h: d.Shape[0], w: d.Shape[1], c: d.Shape[2]}
	a.fill = make([]float32, a.c)
	if d.IsImage() {
		for i := range a.fill {
			a.fill[i] = float32(-d.PixelMean[i] / d.PixelStd[i])
		}
	}
	a.buf = make([]float32, a.h*a.w*a.c)
	return a, nil
}

// apply augments the samples of x in place, drawing from r: for each sample in order, the
// crop's row and column offsets (if crop), then the flip coin (if flip).
func (a *augmenter) apply(r *rand.Rand, x []float32) {
	size := a.h * a.w * a.c
	for s := 0; s+size <= len(x); s += size {
		img := x[s : s+size]
		dy, dx := a.pad, a.pad // no crop: the window sits on the image itself
		if a.crop {
			dy, dx = r.IntN(2*a.pad+1), r.IntN(2*a.pad+1)
		}
		flip := a.flip && r.IntN(2) == 1
		if dy == a.pad && dx == a.pad && !flip {
			continue
		}
		for y := range a.h {
			sy := y + dy - a.pad
			for xo := range a.w {
				col := xo
				if flip {
					col = a.w - 1 - xo
				}
				sx := col + dx - a.pad
				out := a.buf[(y*a.w+xo)*a.c : (y*a.w+xo+1)*a.c]
				if sy < 0 || sy >= a.h || sx < 0 || sx >= a.w {
					copy(out, a.fill)
				} else {
					copy(out, img[(sy*a.w+sx)*a.c:(sy*a.w+sx+1)*a.c])
				}
			}
		}
		copy(img, a.buf)
	}
}
