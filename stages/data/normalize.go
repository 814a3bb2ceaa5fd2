package data

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"os"
	"slices"
	"strings"
)

// Stats are per-channel pixel means and standard deviations, pixels in [0, 1].
type Stats struct {
	Mean, Std []float64
}

// Published channel statistics of the training images, as the usual torchvision
// pipelines apply them. Datasets without an entry are normalized with statistics computed
// from their own official training split (see imageDataset).
var (
	MNISTStats    = Stats{[]float64{0.1307}, []float64{0.3081}}
	CIFAR10Stats  = Stats{[]float64{0.4914, 0.4822, 0.4465}, []float64{0.2470, 0.2435, 0.2616}}
	CIFAR100Stats = Stats{[]float64{0.5071, 0.4865, 0.4409}, []float64{0.2673, 0.2564, 0.2762}}
	SVHNStats     = Stats{[]float64{0.4377, 0.4438, 0.4728}, []float64{0.1980, 0.2010, 0.1970}}
	// ImageNetStats are what ImageNet-pretrained models expect (normalize: imagenet).
	ImageNetStats = Stats{[]float64{0.485, 0.456, 0.406}, []float64{0.229, 0.224, 0.225}}
)

// FLBenchStats are FL-bench's per-dataset normalization constants (normalize: flbench),
// keyed by FL-bench's dataset name (manifest.FLBenchDataset), from uglyghost+FedOBP
// src/utils/constants.py:183-220. FL-bench scales any data whose largest value exceeds 1
// to [0, 1] (data/utils/datasets.py:40-46) and then applies these with
// transforms.Normalize (src/server/fedavg.py:348-366). Its MedMNIST entries are on the
// 0–255 scale, yet applied to the [0, 1] pixels all the same: an OrganAMNIST pixel p
// becomes (p/255 − 118.7546)/62.3489, near −1.9 with a spread of about 1/62 of the usual.
// fedpipe does what FL-bench did.
var FLBenchStats = map[string]Stats{
	"mnist":     {[]float64{0.1307}, []float64{0.3015}},
	"cifar10":   {[]float64{0.4914, 0.4822, 0.4465}, []float64{0.2023, 0.1994, 0.201}},
	"cifar100":  {[]float64{0.5071, 0.4865, 0.4409}, []float64{0.2009, 0.1984, 0.2023}},
	"emnist":    {[]float64{0.1736}, []float64{0.3248}},
	"fmnist":    {[]float64{0.286}, []float64{0.3205}},
	"femnist":   {[]float64{0.9637}, []float64{0.155}},
	"medmnistA": {[]float64{118.7546}, []float64{62.3489}},
	"medmnistC": {[]float64{124.424}, []float64{58.8092}},
	"svhn":      {[]float64{0.4377, 0.4438, 0.4728}, []float64{0.1201, 0.1231, 0.1052}},
}

// flbenchMode is the normalize mode the loader passes for normalize: flbench: the
// constants' FL-bench name after a prefix.
const flbenchMode = "flbench:"

// channelStats computes per-channel mean and (population) standard deviation of the first
// n samples of NHWC pixels x with c channels, accumulating in float64 in sample order.
func channelStats(x []float32, c, n, size int) Stats {
	sum := make([]float64, c)
	sq := make([]float64, c)
	for i, v := range x[:n*size] {
		sum[i%c] += float64(v)
		sq[i%c] += float64(v) * float64(v)
	}
	st := Stats{make([]float64, c), make([]float64, c)}
	cnt := float64(n * size / c)
	for k := range sum {
		st.Mean[k] = sum[k] / cnt
		st.Std[k] = math.Sqrt(math.Max(sq[k]/cnt-st.Mean[k]*st.Mean[k], 0))
		if st.Std[k] < 1e-6 { // a constant channel: leave it centred, not blown up
			st.Std[k] = 1
		}
	}
	return st
}

// imageStats picks the statistics a normalize mode asks for: none → [0, 1] as is;
// imagenet → ImageNet's (their mean over channels for grayscale images); "flbench:<name>"
// → FLBenchStats[name]; dataset (or empty) → def when given, else computed from the
// first trainN samples.
func imageStats(mode string, def *Stats, x []float32, c, trainN, size int) Stats {
	if name, ok := strings.CutPrefix(mode, flbenchMode); ok {
		return FLBenchStats[name]
	}
	switch mode {
	case "none":
		st := Stats{make([]float64, c), make([]float64, c)}
		for k := range st.Std {
			st.Std[k] = 1
		}
		return st
	case "imagenet":
		if c == 3 {
			return ImageNetStats
		}
		m, s := 0.0, 0.0
		for k := 0; k < 3; k++ {
			m += ImageNetStats.Mean[k] / 3
			s += ImageNetStats.Std[k] / 3
		}
		st := Stats{make([]float64, c), make([]float64, c)}
		for k := range st.Mean {
			st.Mean[k], st.Std[k] = m, s
		}
		return st
	}
	if def != nil && len(def.Mean) == c {
		return *def
	}
	return channelStats(x, c, trainN, size)
}

// imageDataset builds an image dataset from NHWC pixels in [0, 1] (normalized in place),
// labels and the number of samples of the official training split (which computed
// statistics are taken from).
func imageDataset(name string, shape []int, classes int, unit []float32, y []int32, trainN int, mode string, def *Stats) *Dataset {
	c := shape[2]
	st := imageStats(mode, def, unit, c, trainN, shape[0]*shape[1]*c)
	for i, v := range unit {
		k := i % c
		unit[i] = float32((float64(v) - st.Mean[k]) / st.Std[k])
	}
	return &Dataset{Name: name, X: unit, Y: y, Shape: shape, Classes: classes,
		PixelMean: append([]float64(nil), st.Mean...), PixelStd: append([]float64(nil), st.Std...)}
}

// byteImageDataset is imageDataset for uint8 pixels: each becomes
// float32((px/255 − mean)/std), computed in float64 from the byte itself. Statistics, when
// computed, come from the training pixels.
func byteImageDataset(name string, shape []int, classes int, pix []byte, y []int32, trainN int, mode string, def *Stats) *Dataset {
	c := shape[2]
	size := shape[0] * shape[1] * c
	var st Stats
	if mode == "none" || mode == "imagenet" || strings.HasPrefix(mode, flbenchMode) || def != nil && len(def.Mean) == c {
		st = imageStats(mode, def, nil, c, 0, size)
	} else {
		st = channelStats(bytesToUnit(pix[:trainN*size]), c, trainN, size)
	}
	// The pixels are kept as bytes, copied so that no larger file buffer stays alive.
	return &Dataset{Name: name, pix: slices.Clone(pix), lut: byteTables(st.Mean, st.Std), Y: y, Shape: shape, Classes: classes,
		PixelMean: append([]float64(nil), st.Mean...), PixelStd: append([]float64(nil), st.Std...)}
}

// byteTables returns, per channel k, the normalized value float32((v/255 − mean[k])/std[k])
// of each byte v, computed in float64.
func byteTables(mean, std []float64) [][256]float32 {
	table := make([][256]float32, len(mean))
	for k := range table {
		for v := range table[k] {
			table[k][v] = float32((float64(v)/255 - mean[k]) / std[k])
		}
	}
	return table
}

// digester hashes a dataset's raw files: each file's name and length, then its bytes, in
// the order read.
type digester struct{ h hash.Hash }

func newDigester() *digester { return &digester{sha256.New()} }

// read reads a file whole and adds it to the digest under name.
func (g *digester) read(path, name string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	g.add(name, raw)
	return raw, nil
}

func (g *digester) add(name string, raw []byte) {
	fmt.Fprintf(g.h, "%s\x00%d\x00", name, len(raw))
	g.h.Write(raw)
}

func (g *digester) sum() string { return "sha256:" + hex.EncodeToString(g.h.Sum(nil)) }

// bytesToUnit scales uint8 pixels to [0, 1].
func bytesToUnit(b []byte) []float32 {
	out := make([]float32, len(b))
	for i, v := range b {
		out[i] = float32(v) / 255
	}
	return out
}
