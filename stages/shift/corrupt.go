// Package shift builds test-time distribution shifts for evaluate-under-shift: a degree
// d of each client's test samples swapped for samples of the pooled test data (DM-PFL
// Table 1), and CIFAR-10-C-style corruptions at five severities generated in Go for any
// image dataset.
package shift

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"sort"
)

// Image is one sample in pixel space: H×W×C values in [0, 1], row-major (HWC).
type Image struct {
	H, W, C int
	Pix     []float64
}

// Corruption changes an image in place at a severity 1..5, drawing any randomness from r.
type Corruption func(img *Image, severity int, r *rand.Rand)

// Corruptions lists the corruptions by name. Their parameters follow CIFAR-10-C's
// (Hendrycks & Dietterich 2019) where an image-size-free parameter exists; blur radii,
// pixelation factors, JPEG qualities and fog are set for 28–32 pixel images so that each
// severity changes the image more than the one below it.
var Corruptions = map[string]Corruption{
	"gaussian_noise": gaussianNoise,
	"shot_noise":     shotNoise,
	"impulse_noise":  impulseNoise,
	"defocus_blur":   defocusBlur,
	"motion_blur":    motionBlur,
	"brightness":     brightness,
	"contrast":       contrast,
	"fog":            fog,
	"pixelate":       pixelate,
	"jpeg":           jpegQuality,
}

// Names lists the corruptions, sorted.
func Names() []string {
	var s []string
	for n := range Corruptions {
		s = append(s, n)
	}
	sort.Strings(s)
	return s
}

func pick(severity int, v ...float64) float64 { return v[min(max(severity, 1), 5)-1] }

func clip01(x float64) float64 { return min(max(x, 0), 1) }

func gaussianNoise(img *Image, s int, r *rand.Rand) {
	c := pick(s, 0.08, 0.12, 0.18, 0.26, 0.38)
	for i, v := range img.Pix {
		img.Pix[i] = clip01(v + c*r.NormFloat64())
	}
}

// poisson draws from Poisson(lambda) (Knuth for small lambda, normal approximation above).
func poisson(r *rand.Rand, lambda float64) float64 {
	if lambda > 30 {
		return math.Max(0, math.Round(lambda+math.Sqrt(lambda)*r.NormFloat64()))
	}
	l, k, p := math.Exp(-lambda), 0.0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

func shotNoise(img *Image, s int, r *rand.Rand) {
	c := pick(s, 60, 25, 12, 5, 3)
	for i, v := range img.Pix {
		img.Pix[i] = clip01(poisson(r, v*c) / c)
	}
}

func impulseNoise(img *Image, s int, r *rand.Rand) {
	amount := pick(s, 0.03, 0.06, 0.09, 0.17, 0.27)
	for i := range img.Pix {
		if u := r.Float64(); u < amount/2 {
			img.Pix[i] = 0
		} else if u < amount {
			img.Pix[i] = 1
		}
	}
}

// convolve applies a normalized kernel (kh×kw, centred) with edge clamping.
func convolve(img *Image, kernel [][]float64) {
	kh, kw := len(kernel), len(kernel[0])
	sum := 0.0
	for _, row := range kernel {
		for _, v := range row {
			sum += v
		}
	}
	out := make([]float64, len(img.Pix))
	for y := 0; y < img.H; y++ {
		for x := 0; x < img.W; x++ {
			for c := 0; c < img.C; c++ {
				acc := 0.0
				for i := 0; i < kh; i++ {
					yy := min(max(y+i-kh/2, 0), img.H-1)
					for j := 0; j < kw; j++ {
						xx := min(max(x+j-kw/2, 0), img.W-1)
						acc += kernel[i][j] * img.Pix[(yy*img.W+xx)*img.C+c]
					}
				}
				out[(y*img.W+x)*img.C+c] = acc / sum
			}
		}
	}
	img.Pix = out
}

func defocusBlur(img *Image, s int, _ *rand.Rand) {
	radius := pick(s, 1, 1.5, 2, 2.5, 3)
	n := int(math.Ceil(radius))*2 + 1
	k := make([][]float64, n)
	for i := range k {
		k[i] = make([]float64, n)
		for j := range k[i] {
			dy, dx := float64(i-n/2), float64(j-n/2)
			if dx*dx+dy*dy <= radius*radius+0.25 {
				k[i][j] = 1
			}
		}
	}
	convolve(img, k)
}

func motionBlur(img *Image, s int, r *rand.Rand) {
	length := int(pick(s, 3, 5, 7, 9, 11))
	k := make([][]float64, length)
	for i := range k {
		k[i] = make([]float64, length)
	}
	// A line through the centre at a random angle (drawn per image, as CIFAR-10-C does).
	angle := r.Float64() * math.Pi
	for t := -length / 2; t <= length/2; t++ {
		i := length/2 + int(math.Round(float64(t)*math.Sin(angle)))
		j := length/2 + int(math.Round(float64(t)*math.Cos(angle)))
		k[i][j] = 1
	}
	convolve(img, k)
}

func brightness(img *Image, s int, _ *rand.Rand) {
	c := pick(s, 0.1, 0.2, 0.3, 0.4, 0.5)
	for i, v := range img.Pix {
		img.Pix[i] = clip01(v + c)
	}
}

func contrast(img *Image, s int, _ *rand.Rand) {
	c := pick(s, 0.4, 0.3, 0.2, 0.1, 0.05)
	for ch := 0; ch < img.C; ch++ {
		mean, n := 0.0, 0
		for i := ch; i < len(img.Pix); i += img.C {
			mean += img.Pix[i]
			n++
		}
		mean /= float64(n)
		for i := ch; i < len(img.Pix); i += img.C {
			img.Pix[i] = clip01((img.Pix[i]-mean)*c + mean)
		}
	}
}

// fog adds a smooth random haze: a coarse random grid bilinearly upsampled, scaled by the
// severity, then the image is rescaled to keep its maximum.
func fog(img *Image, s int, r *rand.Rand) {
	strength := pick(s, 0.2, 0.3, 0.45, 0.6, 0.75)
	const g = 4
	grid := make([]float64, (g+1)*(g+1))
	for i := range grid {
		grid[i] = r.Float64()
	}
	mx := 0.0
	for _, v := range img.Pix {
		mx = math.Max(mx, v)
	}
	for y := 0; y < img.H; y++ {
		fy := float64(y) / float64(max(img.H-1, 1)) * g
		y0 := min(int(fy), g-1)
		ty := fy - float64(y0)
		for x := 0; x < img.W; x++ {
			fx := float64(x) / float64(max(img.W-1, 1)) * g
			x0 := min(int(fx), g-1)
			tx := fx - float64(x0)
			h := (1-ty)*((1-tx)*grid[y0*(g+1)+x0]+tx*grid[y0*(g+1)+x0+1]) +
				ty*((1-tx)*grid[(y0+1)*(g+1)+x0]+tx*grid[(y0+1)*(g+1)+x0+1])
			for c := 0; c < img.C; c++ {
				i := (y*img.W+x)*img.C + c
				img.Pix[i] = clip01((img.Pix[i] + strength*h) * mx / (mx + strength))
			}
		}
	}
}

// pixelate averages the image over blocks (down to f·H × f·W, area-weighted) and
// scales it back up by repetition.
func pixelate(img *Image, s int, _ *rand.Rand) {
	f := pick(s, 0.8, 0.6, 0.45, 0.35, 0.25)
	h, w := max(1, int(math.Round(float64(img.H)*f))), max(1, int(math.Round(float64(img.W)*f)))
	small := make([]float64, h*w*img.C)
	count := make([]float64, h*w)
	for y := 0; y < img.H; y++ {
		for x := 0; x < img.W; x++ {
			sy, sx := y*h/img.H, x*w/img.W
			count[sy*w+sx]++
			for c := 0; c < img.C; c++ {
				small[(sy*w+sx)*img.C+c] += img.Pix[(y*img.W+x)*img.C+c]
			}
		}
	}
	for y := 0; y < img.H; y++ {
		for x := 0; x < img.W; x++ {
			sy, sx := y*h/img.H, x*w/img.W
			for c := 0; c < img.C; c++ {
				img.Pix[(y*img.W+x)*img.C+c] = small[(sy*w+sx)*img.C+c] / count[sy*w+sx]
			}
		}
	}
}

// jpegQuality round-trips the image through Go's (deterministic) JPEG encoder.
func jpegQuality(img *Image, s int, _ *rand.Rand) {
	// CIFAR-10-C uses qualities 80, 65, 58, 50, 40; at 28–32 pixels adjacent ones give
	// nearly the same image, so the ladder is spread further.
	q := int(pick(s, 80, 60, 45, 30, 15))
	var src image.Image
	to8 := func(v float64) uint8 { return uint8(math.Round(clip01(v) * 255)) }
	if img.C == 1 {
		g := image.NewGray(image.Rect(0, 0, img.W, img.H))
		for i, v := range img.Pix {
			g.Pix[i] = to8(v)
		}
		src = g
	} else {
		rgba := image.NewRGBA(image.Rect(0, 0, img.W, img.H))
		for y := 0; y < img.H; y++ {
			for x := 0; x < img.W; x++ {
				p := img.Pix[(y*img.W+x)*img.C:]
				rgba.Set(x, y, color.RGBA{to8(p[0]), to8(p[min(1, img.C-1)]), to8(p[min(2, img.C-1)]), 255})
			}
		}
		src = rgba
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, src, &jpeg.Options{Quality: q}); err != nil {
		panic(fmt.Sprintf("shift: jpeg encode: %v", err))
	}
	dec, err := jpeg.Decode(&buf)
	if err != nil {
		panic(fmt.Sprintf("shift: jpeg decode: %v", err))
	}
	for y := 0; y < img.H; y++ {
		for x := 0; x < img.W; x++ {
			r, g, b, _ := dec.At(x, y).RGBA()
			vals := []uint32{r, g, b}
			for c := 0; c < img.C; c++ {
				v := vals[min(c, 2)]
				if img.C == 1 {
					v = r
				}
				img.Pix[(y*img.W+x)*img.C+c] = float64(v) / 0xffff
			}
		}
	}
}
