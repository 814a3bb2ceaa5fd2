package data

import (
	"fmt"

	"github.com/fedpipe/fedpipe/manifest"
)

// EMNISTClasses maps each EMNIST split to its number of classes. letters stores labels
// 1–26; they are shifted to 0–25.
var EMNISTClasses = map[string]int{"balanced": 47, "byclass": 62, "bymerge": 47, "digits": 10, "letters": 26, "mnist": 10}

// EMNISTDefaultSplit is the split used when dataset.variant is empty: byclass, the 62-class
// task FedOBP describes.
const EMNISTDefaultSplit = "byclass"

func emnistSplit(spec manifest.DatasetSpec) string {
	if spec.Variant == "" {
		return EMNISTDefaultSplit
	}
	return spec.Variant
}

// emnistFile names an EMNIST IDX file, e.g. emnist-byclass-train-images-idx3-ubyte.
func emnistFile(spec manifest.DatasetSpec, split, kind string) string {
	rank := "3"
	if kind == "labels" {
		rank = "1"
	}
	return fmt.Sprintf("emnist-%s-%s-%s-idx%s-ubyte", emnistSplit(spec), split, kind, rank)
}

// idxSet reads pairs of IDX image and label files (train first), checks their shapes, and
// returns the pooled 28×28 pixels and labels and the train count. offset is subtracted
// from every label; labels must then lie in [0, classes).
func idxSet(dataset, dir string, files [][2]string, classes, offset int, g *digester) (pix []byte, y []int32, trainN int, err error) {
	for s, pair := range files {
		var dims []int
		var vals [2][]byte
		for k, name := range pair {
			p, err := findIDX(dir, name)
			if err != nil {
				return nil, nil, 0, &MissingDataError{Dataset: dataset, Searched: []string{dir}, Missing: name + "[.gz]",
					Install: installHelp(dataset)}
			}
			raw, err := g.read(p, name)
			if err != nil {
				return nil, nil, 0, err
			}
			d, v, err := ReadIDX(p, raw)
			if err != nil {
				return nil, nil, 0, err
			}
			if k == 0 {
				if len(d) != 3 || d[1] != 28 || d[2] != 28 {
					return nil, nil, 0, &IDXError{p, fmt.Sprintf("image dimensions %v, want [n 28 28]", d)}
				}
				dims = d
			} else {
				if len(d) != 1 || d[0] != dims[0] {
					return nil, nil, 0, &IDXError{p, fmt.Sprintf("label dimensions %v, want [%d] to match the images", d, dims[0])}
				}
				for _, l := range v {
					if int(l)-offset < 0 || int(l)-offset >= classes {
						return nil, nil, 0, &IDXError{p, fmt.Sprintf("label %d out of range %d..%d", l, offset, classes-1+offset)}
					}
				}
			}
			vals[k] = v
		}
		pix = append(pix, vals[0]...)
		for _, l := range vals[1] {
			y = append(y, int32(int(l)-offset))
		}
		if s == 0 {
			trainN = dims[0]
		}
	}
	return pix, y, trainN, nil
}

// LoadMNIST reads the four MNIST IDX files in dir (gzipped or not), pooled train then
// test, normalized with MNISTStats unless mode says otherwise.
func LoadMNIST(dir, mode string) (*Dataset, error) {
	g := newDigester()
	pix, y, trainN, err := idxSet("mnist", dir, [][2]string{{fmnistFiles[0], fmnistFiles[1]}, {fmnistFiles[2], fmnistFiles[3]}}, 10, 0, g)
	if err != nil {
		return nil, err
	}
	d := byteImageDataset("mnist", []int{28, 28, 1}, 10, pix, y, trainN, mode, &MNISTStats)
	d.Digest, d.Source = g.sum(), dir
	return d, nil
}

func loadMNIST(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
	return LoadMNIST(dir, spec.Normalize)
}

// LoadEMNIST reads one EMNIST split's IDX files (emnist-<split>-{train,test}-…) from dir,
// pooled train then test. The files store each image transposed (column-major); they are
// transposed back so that digits stand upright as in MNIST. Normalization statistics are
// computed from the split's training images unless mode says otherwise.
func LoadEMNIST(dir, split, mode string) (*Dataset, error) {
	classes, ok := EMNISTClasses[split]
	if !ok {
		return nil, fmt.Errorf("dataset.variant: unknown EMNIST split %q (balanced, byclass, bymerge, digits, letters, mnist): %w", split, manifest.ErrInvalid)
	}
	spec := manifest.DatasetSpec{Variant: split}
	offset := 0
	if split == "letters" {
		offset = 1
	}
	g := newDigester()
	pix, y, trainN, err := idxSet("emnist", dir, [][2]string{
		{emnistFile(spec, "train", "images"), emnistFile(spec, "train", "labels")},
		{emnistFile(spec, "test", "images"), emnistFile(spec, "test", "labels")}}, classes, offset, g)
	if err != nil {
		return nil, err
	}
	upright := make([]byte, len(pix))
	for s := 0; s < len(pix)/784; s++ {
		for r := 0; r < 28; r++ {
			for c := 0; c < 28; c++ {
				upright[s*784+r*28+c] = pix[s*784+c*28+r]
			}
		}
	}
	d := byteImageDataset("emnist", []int{28, 28, 1}, classes, upright, y, trainN, mode, nil)
	d.Digest, d.Source = g.sum(), dir
	return d, nil
}

func loadEMNIST(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
	return LoadEMNIST(dir, emnistSplit(spec), spec.Normalize)
}
