// Package data finds, reads and generates the datasets that partitions are cut from:
// every dataset of the seed papers from its standard on-disk format (IDX, CIFAR binary,
// NPY/NPZ, MATLAB v5, image folders, UCI HAR text, LEAF JSON) and Synthetic(α, β) from
// the FedProx generator.
package data

import (
	"slices"

	"github.com/fedpipe/fedpipe/manifest"
)

// Dataset is a pooled dataset: every sample of every official split, in a fixed order.
type Dataset struct {
	Name string
	// X holds the samples back to back, each of prod(Shape) float32 values (NHWC for
	// images), already normalized. It is nil for byte images (see pix), whose values
	// Sample and Gather decode.
	X []float32
	// pix holds the pixels of a dataset read from uint8 images, back to back (NHWC), and
	// lut each channel's 256 normalized values: value j of the pooled samples is
	// lut[j%C][pix[j]], the float32 X would hold, in a quarter of its memory.
	pix []byte
	lut [][256]float32
	// Y holds the labels, 0 ≤ y < Classes.
	Y       []int32
	Shape   []int
	Classes int
	// Groups holds each sample's natural client (Synthetic's device, FEMNIST's writer,
	// HAR's subject), or nil.
	Groups []int32
	// Domains holds each sample's domain (OfficeHome: an index into DomainNames), or nil.
	Domains     []int32
	DomainNames []string
	// TestStart is the index of the first sample of the official test split in pooled
	// order (CIFAR-10: 50,000, after the five training batches); 0 where not recorded.
	TestStart int
	// Digest identifies the content (see manifest.DataDesc).
	Digest string
	// Source is where the data came from, for messages.
	Source string
	// PixelMean and PixelStd undo the normalization of image data, one entry per channel
	// (pixel in [0, 1] = value·PixelStd[c] + PixelMean[c] for channel c); both are nil
	// for data that are not images.
	PixelMean, PixelStd []float64
}

// IsImage reports whether samples are H×W×C images with per-channel normalization.
func (d *Dataset) IsImage() bool { return len(d.Shape) == 3 && len(d.PixelStd) == d.Shape[2] }

// Len is the number of samples.
func (d *Dataset) Len() int { return len(d.Y) }

// SampleSize is the number of values per sample.
func (d *Dataset) SampleSize() int {
	n := 1
	for _, s := range d.Shape {
		n *= s
	}
	return n
}

// Sample returns sample i's values: a view of X, or for byte images a fresh slice.
func (d *Dataset) Sample(i int) []float32 {
	s := d.SampleSize()
	if d.pix == nil {
		return d.X[i*s : (i+1)*s]
	}
	return d.appendSample(make([]float32, 0, s), i, s)
}

// appendSample appends sample i (of s values) to x.
func (d *Dataset) appendSample(x []float32, i, s int) []float32 {
	if d.pix == nil {
		return append(x, d.X[i*s:(i+1)*s]...)
	}
	n := len(x)
	x = slices.Grow(x, s)[:n+s]
	decodeBytes(x[n:], d.pix[i*s:(i+1)*s], d.lut)
	return x
}

// decodeBytes sets out[j] to lut[j%C][pix[j]] (C = len(lut)): pix holds whole pixels, so
// value j is of channel j%C.
func decodeBytes(out []float32, pix []byte, lut [][256]float32) {
	if len(lut) == 1 {
		for j, v := range pix {
			out[j] = lut[0][v]
		}
		return
	}
	c := len(lut)
	for j, v := range pix {
		out[j] = lut[j%c][v]
	}
}

// Gather copies the samples at idx, in that order, into contiguous x and y slices.
func (d *Dataset) Gather(idx []int) ([]float32, []int32) {
	s := d.SampleSize()
	x := make([]float32, 0, len(idx)*s)
	y := make([]int32, 0, len(idx))
	for _, i := range idx {
		x = d.appendSample(x, i, s)
		y = append(y, d.Y[i])
	}
	return x, y
}

// Desc describes the dataset for the stage graph.
func (d *Dataset) Desc() *manifest.DataDesc {
	return &manifest.DataDesc{Digest: d.Digest, Shape: d.Shape, Classes: d.Classes, Samples: d.Len(), Source: d.Source}
}
