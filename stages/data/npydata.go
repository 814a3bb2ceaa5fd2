package data

import (
	"fmt"
	"path/filepath"

	"github.com/fedpipe/fedpipe/manifest"
)

// CIFAR10CCorruptions lists the corruption files of CIFAR-10-C (Hendrycks & Dietterich
// 2019), each <name>.npy (the manifest's list, manifest.CIFAR10CNames).
var CIFAR10CCorruptions = manifest.CIFAR10CNames

// LoadCIFAR10C reads one corruption of CIFAR-10-C from dir (<corruption>.npy, N = 5 ×
// 10,000 uint8 32×32×3 images, severities 1 to 5 one block after another, and
// labels.npy) and returns the images of one severity (0: all five, in severity order),
// normalized with CIFAR10Stats like CIFAR-10 itself.
func LoadCIFAR10C(dir, corruption string, severity int) (*Dataset, error) {
	return loadCIFAR10C(dir, corruption, severity, "dataset")
}

func loadCIFAR10CSpec(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
	return loadCIFAR10C(dir, spec.Variant, spec.Severity, spec.Normalize)
}

func loadCIFAR10C(dir, corruption string, severity int, mode string) (*Dataset, error) {
	if severity < 0 || severity > 5 {
		return nil, fmt.Errorf("dataset.severity: %d outside 0..5 (0: all severities): %w", severity, manifest.ErrInvalid)
	}
	g := newDigester()
	var arr [2]*NPY
	for k, name := range []string{corruption + ".npy", "labels.npy"} {
		p := filepath.Join(dir, name)
		if !isFile(p) {
			return nil, &MissingDataError{Dataset: "cifar10c", Searched: []string{dir}, Missing: name, Install: installHelp("cifar10c")}
		}
		raw, err := g.read(p, name)
		if err != nil {
			return nil, err
		}
		if arr[k], err = ReadNPY(p, raw); err != nil {
			return nil, err
		}
	}
	img, lab := arr[0], arr[1]
	p := filepath.Join(dir, corruption+".npy")
	if img.Kind != "u1" || len(img.Shape) != 4 || img.Shape[1] != 32 || img.Shape[2] != 32 || img.Shape[3] != 3 || img.Shape[0]%5 != 0 {
		return nil, &FormatError{p, "CIFAR-10-C array", fmt.Sprintf("%s array of shape %v, want uint8 [5·n 32 32 3]", img.Kind, img.Shape)}
	}
	n := img.Shape[0]
	if lab.Len() != n {
		return nil, &FormatError{filepath.Join(dir, "labels.npy"), "CIFAR-10-C labels", fmt.Sprintf("%d labels for %d images in %s", lab.Len(), n, p)}
	}
	lo, hi := 0, n
	if severity > 0 {
		lo, hi = (severity-1)*n/5, severity*n/5
	}
	y := make([]int32, 0, hi-lo)
	for i := lo; i < hi; i++ {
		l := lab.Int(i)
		if l < 0 || l > 9 {
			return nil, &FormatError{filepath.Join(dir, "labels.npy"), "CIFAR-10-C labels", fmt.Sprintf("label %d at %d outside 0..9", l, i)}
		}
		y = append(y, int32(l))
	}
	d := byteImageDataset("cifar10c", []int{32, 32, 3}, 10, img.Data[lo*cifarPixels:hi*cifarPixels], y, len(y), mode, &CIFAR10Stats)
	d.Digest, d.Source = g.sum(), dir
	return d, nil
}

// MedMNISTClasses gives the number of classes of each single-label MedMNIST v2 subset.
var MedMNISTClasses = map[string]int{"pathmnist": 9, "octmnist": 4, "pneumoniamnist": 2, "dermamnist": 7,
	"retinamnist": 5, "breastmnist": 2, "bloodmnist": 8, "tissuemnist": 8, "organamnist": 11,
	"organcmnist": 11, "organsmnist": 11}

// LoadMedMNIST reads a MedMNIST .npz (train_images, train_labels, val_*, test_*; uint8
// images N×H×W or N×H×W×3, labels N or N×1), pooled train, val, test. Normalization
// statistics are computed from the train images unless mode says otherwise.
func LoadMedMNIST(path, mode string) (*Dataset, error) {
	g := newDigester()
	raw, err := g.read(path, filepath.Base(path))
	if err != nil {
		return nil, err
	}
	arrs, err := ReadNPZ(path, raw)
	if err != nil {
		return nil, err
	}
	var shape []int
	var pix []byte
	var y []int32
	trainN := 0
	maxLabel := int64(-1)
	for _, split := range []string{"train", "val", "test"} {
		img, lab := arrs[split+"_images"], arrs[split+"_labels"]
		if img == nil || lab == nil {
			return nil, &FormatError{path, "MedMNIST .npz", fmt.Sprintf("no %s_images.npy or %s_labels.npy member", split, split)}
		}
		if img.Kind != "u1" || (len(img.Shape) != 3 && len(img.Shape) != 4) || len(img.Shape) == 4 && img.Shape[3] != 3 {
			return nil, &FormatError{path, "MedMNIST .npz", fmt.Sprintf("%s_images: %s array of shape %v, want uint8 [n h w] or [n h w 3]", split, img.Kind, img.Shape)}
		}
		s := []int{img.Shape[1], img.Shape[2], 1}
		if len(img.Shape) == 4 {
			s[2] = 3
		}
		if shape == nil {
			shape = s
		} else if fmt.Sprint(s) != fmt.Sprint(shape) {
			return nil, &FormatError{path, "MedMNIST .npz", fmt.Sprintf("%s_images are %v, train_images %v", split, s, shape)}
		}
		n := img.Shape[0]
		if lab.Len() != n || len(lab.Shape) > 2 || len(lab.Shape) == 2 && lab.Shape[1] != 1 {
			return nil, &FormatError{path, "MedMNIST .npz", fmt.Sprintf("%s_labels has shape %v for %d images, want [%d 1] (multi-label subsets such as chestmnist are not supported)", split, lab.Shape, n, n)}
		}
		for i := 0; i < n; i++ {
			l := lab.Int(i)
			if l < 0 || l > 1000 {
				return nil, &FormatError{path, "MedMNIST .npz", fmt.Sprintf("%s_labels[%d] = %d", split, i, l)}
			}
			maxLabel = max(maxLabel, l)
			y = append(y, int32(l))
		}
		pix = append(pix, img.Data...)
		if split == "train" {
			trainN = n
		}
	}
	name := filepath.Base(path)
	name = name[:len(name)-len(filepath.Ext(name))]
	classes, ok := MedMNISTClasses[name]
	if !ok {
		classes = int(maxLabel) + 1
	} else if int(maxLabel) >= classes {
		return nil, &FormatError{path, "MedMNIST .npz", fmt.Sprintf("label %d, but %s has %d classes", maxLabel, name, classes)}
	}
	d := byteImageDataset("medmnist", shape, classes, pix, y, trainN, mode, nil)
	d.Digest, d.Source = g.sum(), path
	return d, nil
}

func loadMedMNIST(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
	return LoadMedMNIST(filepath.Join(dir, spec.Variant+".npz"), spec.Normalize)
}
