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

// maxIDXBytes bounds the values an IDX header may promise (Fashion-MNIST's largest file
// holds 47 MB); a gzip stream is never read past its header's promise (readGzipIDX).
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
// returns its dimensions and data. A gzip stream is decompressed only as far as its header
// promises (and one byte more, to tell that it holds more), so a stream that inflates far
// past the promise costs no more than the promise.
func ReadIDX(path string, raw []byte) (dims []int, values []byte, err error) {
	if len(raw) >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		return readGzipIDX(path, raw)
	}
	dims, n, err := parseIDXHeader(path, raw)
	if err != nil {
		return nil, nil, err
	}
	body := raw[4+4*len(dims):]
	if len(body) != n {
		return nil, nil, &IDXError{path, fmt.Sprintf("header promises %d values %v, file holds %d", n, dims, len(body))}
	}
	return dims, body, nil
}

// readGzipIDX is ReadIDX for a gzipped file: the header first, then at most the promised
// values and one byte more.
func readGzipIDX(path string, raw []byte) ([]int, []byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, &IDXError{path, "bad gzip header: " + err.Error()}
	}
	corrupt := func(err error) error { return &IDXError{path, "truncated or corrupt gzip data: " + err.Error()} }
	head := make([]byte, 4, 4+4*4)
	if k, err := io.ReadFull(zr, head); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, nil, &IDXError{path, fmt.Sprintf("%d bytes, shorter than the 4-byte header", k)}
		}
		return nil, nil, corrupt(err)
	}
	head = head[:4+4*int(min(head[3], 4))]
	if _, err := io.ReadFull(zr, head[4:]); err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, nil, corrupt(err)
	} else if err != nil {
		head = head[:4] // parseIDXHeader reports the truncated header (or the bad rank)
	}
	dims, n, err := parseIDXHeader(path, head)
	if err != nil {
		return nil, nil, err
	}
	// ReadAll grows its buffer with what arrives, so a header promising much over a short
	// stream allocates no more than the stream holds; a stream that ends within the limit
	// was read to its end, where gzip checks its checksum.
	body, err := io.ReadAll(io.LimitReader(zr, int64(n)+1))
	if err != nil {
		return nil, nil, corrupt(err)
	}
	if len(body) > n {
		return nil, nil, &IDXError{path, fmt.Sprintf("decompresses to more than the %d values its header promises %v", n, dims)}
	}
	if len(body) < n {
		return nil, nil, &IDXError{path, fmt.Sprintf("header promises %d values %v, file holds %d", n, dims, len(body))}
	}
	return dims, body, nil
}

// parseIDXHeader checks an IDX header at the start of b (magic, unsigned-byte elements,
// rank 1 to 4, positive dimensions) and returns the dimensions and their product.
func parseIDXHeader(path string, b []byte) (dims []int, n int, err error) {
	if len(b) < 4 {
		return nil, 0, &IDXError{path, fmt.Sprintf("%d bytes, shorter than the 4-byte header", len(b))}
	}
	if b[0] != 0 || b[1] != 0 {
		return nil, 0, &IDXError{path, fmt.Sprintf("magic %x, want 0000xxxx", b[:4])}
	}
	if b[2] != 0x08 {
		return nil, 0, &IDXError{path, fmt.Sprintf("element type 0x%02x, want 0x08 (unsigned byte)", b[2])}
	}
	rank := int(b[3])
	if rank < 1 || rank > 4 {
		return nil, 0, &IDXError{path, fmt.Sprintf("rank %d, want 1 to 4", rank)}
	}
	if len(b) < 4+4*rank {
		return nil, 0, &IDXError{path, "truncated header"}
	}
	n = 1
	for i := 0; i < rank; i++ {
		d := int(binary.BigEndian.Uint32(b[4+4*i:]))
		if d <= 0 || d > 1<<28 {
			return nil, 0, &IDXError{path, fmt.Sprintf("dimension %d is %d", i, d)}
		}
		dims = append(dims, d)
		n *= d
		if n > maxIDXBytes {
			return nil, 0, &IDXError{path, fmt.Sprintf("dimensions %v promise more than %d values", dims, maxIDXBytes)}
		}
	}
	return dims, n, nil
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
