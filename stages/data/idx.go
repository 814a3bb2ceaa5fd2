package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fedpipe/fedpipe/manifest"
)

// fmnistFiles are the four IDX files of Fashion-MNIST, official train split first.
var fmnistFiles = []string{
	"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
	"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
}

// FMNIST normalization constants (mean and standard deviation of the training pixels in
// [0, 1]), as FL-bench applies them.
const (
	FMNISTMean = 0.2860
	FMNISTStd  = 0.3530
)

// maxIDXBytes bounds a decompressed IDX file (Fashion-MNIST's largest is 47 MB), so a
// corrupt or hostile gzip stream cannot exhaust memory.
const maxIDXBytes = 1 << 30

// findIDX returns the path of an IDX file in dir, gzipped or not.
func findIDX(dir, name string) (string, error) {
	for _, p := range []string{filepath.Join(dir, name+".gz"), filepath.Join(dir, name)} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: no %s or %s.gz", dir, name, name)
}

// IDXError describes a malformed IDX file. It is an input error.
type IDXError struct {
	Path string
	Msg  string
}

// Is makes errors.Is(err, manifest.ErrInvalid) true: a malformed data file is bad input.
func (e *IDXError) Is(target error) bool { return target == manifest.ErrInvalid }

func (e *IDXError) Error() string {
	return fmt.Sprintf("%s: not a valid IDX file: %s (expected the MNIST-format file, as shipped by dataset-fashion-mnist)", e.Path, e.Msg)
}

// ReadIDX parses an IDX file (gzipped or not, detected by content) of unsigned bytes and
// returns its dimensions and data.
func ReadIDX(path string, raw []byte) (dims []int, values []byte, err error) {
	b := raw
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, nil, &IDXError{path, "bad gzip header: " + err.Error()}
		}
		b, err = io.ReadAll(io.LimitReader(zr, maxIDXBytes+1))
		if err != nil {
			return nil, nil, &IDXError{path, "truncated or corrupt gzip data: " + err.Error()}
		}
		if len(b) > maxIDXBytes {
			return nil, nil, &IDXError{path, fmt.Sprintf("decompresses to more than %d bytes", maxIDXBytes)}
		}
	}
	if len(b) < 4 {
		return nil, nil, &IDXError{path, fmt.Sprintf("%d bytes, shorter than the 4-byte header", len(b))}
	}
	if b[0] != 0 || b[1] != 0 {
		return nil, nil, &IDXError{path, fmt.Sprintf("magic %x, want 0000xxxx", b[:4])}
	}
	if b[2] != 0x08 {
		return nil, nil, &IDXError{path, fmt.Sprintf("element type 0x%02x, want 0x08 (unsigned byte)", b[2])}
	}
	rank := int(b[3])
	if rank < 1 || rank > 4 {
		return nil, nil, &IDXError{path, fmt.Sprintf("rank %d, want 1 to 4", rank)}
	}
	if len(b) < 4+4*rank {
		return nil, nil, &IDXError{path, "truncated header"}
	}
	n := 1
	for i := 0; i < rank; i++ {
		d := int(binary.BigEndian.Uint32(b[4+4*i:]))
		if d <= 0 || d > 1<<28 {
			return nil, nil, &IDXError{path, fmt.Sprintf("dimension %d is %d", i, d)}
		}
		dims = append(dims, d)
		n *= d
		if n > 1<<31 {
			return nil, nil, &IDXError{path, "dimensions too large"}
		}
	}
	body := b[4+4*rank:]
	if len(body) != n {
		return nil, nil, &IDXError{path, fmt.Sprintf("header promises %d values %v, file holds %d", n, dims, len(body))}
	}
	return dims, body, nil
}

// LoadFashionMNIST reads the four Fashion-MNIST IDX files in dir and pools them, official
// train split first then test (FL-bench merges them before partitioning). Pixels are
// scaled to [0, 1] and normalized with FMNISTMean and FMNISTStd. The digest covers the
// files' raw bytes.
func LoadFashionMNIST(dir string) (*Dataset, error) { return loadFashionMNIST(dir, "dataset") }

func loadFashionMNIST(dir, mode string) (*Dataset, error) {
	g := newDigester()
	pix, y, trainN, err := idxSet("fmnist", dir, [][2]string{{fmnistFiles[0], fmnistFiles[1]}, {fmnistFiles[2], fmnistFiles[3]}}, 10, 0, g)
	if err != nil {
		return nil, err
	}
	d := byteImageDataset("fmnist", []int{28, 28, 1}, 10, pix, y, trainN, mode, &Stats{[]float64{FMNISTMean}, []float64{FMNISTStd}})
	d.Digest, d.Source = g.sum(), dir
	return d, nil
}
