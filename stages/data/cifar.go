package data

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/fedpipe/fedpipe/manifest"
)

// cifarPixels is the size of one CIFAR image: 3 planes of 32×32 bytes (R, G, B).
const cifarPixels = 3 * 32 * 32

// readCIFARBin reads CIFAR binary files (records of labelBytes label bytes then 3072
// channel-planar pixels), appending NHWC pixels and the label at byte
// labelIndex. It returns the number of records read.
func readCIFARBin(dataset, dir string, names []string, labelBytes, labelIndex, classes int, g *digester, pix *[]byte, y *[]int32) (int, error) {
	rec := labelBytes + cifarPixels
	n := 0
	for _, name := range names {
		p := filepath.Join(dir, name)
		if !isFile(p) {
			return 0, &MissingDataError{Dataset: dataset, Searched: []string{dir}, Missing: name, Install: installHelp(dataset)}
		}
		raw, err := g.read(p, name)
		if err != nil {
			return 0, err
		}
		if len(raw) == 0 || len(raw)%rec != 0 {
			return 0, &FormatError{p, "CIFAR binary file", fmt.Sprintf("%d bytes is not a whole number of %d-byte records (%d label byte(s) + 3072 pixels)", len(raw), rec, labelBytes)}
		}
		*pix = slices.Grow(*pix, len(raw)/rec*cifarPixels)
		*y = slices.Grow(*y, len(raw)/rec)
		for off := 0; off < len(raw); off += rec {
			l := int(raw[off+labelIndex])
			if l >= classes {
				return 0, &FormatError{p, "CIFAR binary file", fmt.Sprintf("record %d has label %d, want 0..%d", off/rec, l, classes-1)}
			}
			*y = append(*y, int32(l))
			px := raw[off+labelBytes : off+rec]
			for i := 0; i < 1024; i++ {
				*pix = append(*pix, px[i], px[1024+i], px[2048+i])
			}
			n++
		}
	}
	return n, nil
}

// LoadCIFAR10 reads the CIFAR-10 binary version in dir (data_batch_1.bin … 5, then
// test_batch.bin), pooled in that order: the test images start at TestStart (50,000).
func LoadCIFAR10(dir, mode string) (*Dataset, error) {
	g := newDigester()
	var pix []byte
	var y []int32
	train, err := readCIFARBin("cifar10", dir, []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"}, 1, 0, 10, g, &pix, &y)
	if err != nil {
		return nil, err
	}
	if _, err := readCIFARBin("cifar10", dir, []string{"test_batch.bin"}, 1, 0, 10, g, &pix, &y); err != nil {
		return nil, err
	}
	d := byteImageDataset("cifar10", []int{32, 32, 3}, 10, pix, y, train, mode, &CIFAR10Stats)
	d.Digest, d.Source, d.TestStart = g.sum(), dir, train
	return d, nil
}

// LoadCIFAR100 reads the CIFAR-100 binary version in dir (train.bin then test.bin) with
// its fine (100-class) labels.
func LoadCIFAR100(dir, mode string) (*Dataset, error) {
	g := newDigester()
	var pix []byte
	var y []int32
	train, err := readCIFARBin("cifar100", dir, []string{"train.bin"}, 2, 1, 100, g, &pix, &y)
	if err != nil {
		return nil, err
	}
	if _, err := readCIFARBin("cifar100", dir, []string{"test.bin"}, 2, 1, 100, g, &pix, &y); err != nil {
		return nil, err
	}
	d := byteImageDataset("cifar100", []int{32, 32, 3}, 100, pix, y, train, mode, &CIFAR100Stats)
	d.Digest, d.Source = g.sum(), dir
	return d, nil
}

func loadCIFAR10(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
	return LoadCIFAR10(dir, spec.Normalize)
}
func loadCIFAR100(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
	return LoadCIFAR100(dir, spec.Normalize)
}
