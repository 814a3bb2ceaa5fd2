package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/manifest"
)

// idx writes an unsigned-byte IDX file with the given dimensions and values.
func idx(dims []int, vals []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 8, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(vals)
	return b.Bytes()
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// writeFMNIST writes a tiny Fashion-MNIST-format directory: n train and m test images.
func writeFMNIST(t *testing.T, dir string, n, m int, zip bool) {
	t.Helper()
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"train-images-idx3-ubyte", idx([]int{n, 28, 28}, bytes.Repeat([]byte{255}, n*784))},
		{"train-labels-idx1-ubyte", idx([]int{n}, bytes.Repeat([]byte{3}, n))},
		{"t10k-images-idx3-ubyte", idx([]int{m, 28, 28}, make([]byte, m*784))},
		{"t10k-labels-idx1-ubyte", idx([]int{m}, bytes.Repeat([]byte{9}, m))},
	} {
		name, b := f.name, f.data
		if zip {
			name, b = name+".gz", gz(b)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadFashionMNISTFormat(t *testing.T) {
	for _, zip := range []bool{true, false} {
		dir := t.TempDir()
		writeFMNIST(t, dir, 5, 3, zip)
		d, err := LoadFashionMNIST(dir)
		if err != nil {
			t.Fatal(err)
		}
		if d.Len() != 8 || d.Y[0] != 3 || d.Y[7] != 9 {
			t.Fatalf("pooled %d samples, labels %v", d.Len(), d.Y)
		}
		// Pixel 255 → (1 − mean)/std; pixel 0 → −mean/std.
		if got, want := d.Sample(0)[0], float32((1-FMNISTMean)/FMNISTStd); got != want {
			t.Errorf("white pixel = %v, want %v", got, want)
		}
		if got, want := d.Sample(7)[0], float32(-FMNISTMean/FMNISTStd); got != want {
			t.Errorf("black pixel = %v, want %v", got, want)
		}
	}
}

func TestIDXErrorsNameThePath(t *testing.T) {
	good := idx([]int{2, 28, 28}, make([]byte, 2*784))
	cases := map[string][]byte{
		"truncated body":   good[:len(good)-10],
		"bad magic":        append([]byte{1, 2, 8, 3}, good[4:]...),
		"short":            {0, 0},
		"corrupt gzip":     gz(good)[:40],
		"wrong elem type":  append([]byte{0, 0, 0x0d, 3}, good[4:]...),
		"trailing garbage": append(append([]byte(nil), good...), 1, 2, 3),
	}
	for name, b := range cases {
		_, _, err := ReadIDX("/x/train-images-idx3-ubyte", b)
		var ie *IDXError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "/x/train-images-idx3-ubyte") {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

func TestMissingFMNISTNamesSearchedPathsAndInstall(t *testing.T) {
	l := &Loader{DataDir: filepath.Join(t.TempDir(), "nothing")}
	_, err := l.Load(manifest.DatasetSpec{Name: "fmnist"})
	if !errors.Is(err, manifest.ErrInvalid) {
		t.Fatalf("error %v is not an input error", err)
	}
	for _, want := range []string{l.DataDir, filepath.Join(l.DataDir, "fashion-mnist"), "apt-get install dataset-fashion-mnist"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestSyntheticIsDeterministicAndNonIID(t *testing.T) {
	p := SyntheticParams{Alpha: 1, Beta: 1, Devices: 8, Features: 60, Classes: 10}
	a, b := Synthetic(p), Synthetic(p)
	if a.Digest != b.Digest || a.Len() != b.Len() {
		t.Fatal("same parameters gave different data")
	}
	p.Alpha = 0.5
	if Synthetic(p).Digest == a.Digest {
		t.Error("different α gave the same digest")
	}
	// Devices differ in their label distributions.
	first := map[int32]map[int32]int{}
	for i, g := range a.Groups {
		if first[g] == nil {
			first[g] = map[int32]int{}
		}
		first[g][a.Y[i]]++
	}
	distinct := map[int32]bool{}
	for _, counts := range first {
		best, bestN := int32(-1), -1
		for y, n := range counts {
			if n > bestN || n == bestN && y < best {
				best, bestN = y, n
			}
		}
		distinct[best] = true
	}
	if len(distinct) < 3 {
		t.Errorf("8 devices share %d majority labels; Synthetic(1,1) should be non-IID", len(distinct))
	}
}

func TestRealFashionMNIST(t *testing.T) {
	if _, err := os.Stat(FMNISTSystemDir); err != nil {
		t.Skip("Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)")
	}
	d, err := LoadFashionMNIST(FMNISTSystemDir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 70000 || d.Classes != 10 {
		t.Fatalf("%d samples", d.Len())
	}
	counts := make([]int, 10)
	for _, y := range d.Y {
		counts[y]++
	}
	for c, n := range counts {
		if n != 7000 {
			t.Errorf("class %d has %d samples, want 7000", c, n)
		}
	}
}

// FuzzReadIDX: any bytes either parse into dimensions whose product is the value count,
// or fail with an IDXError naming the path; never a panic.
func FuzzReadIDX(f *testing.F) {
	f.Add(idx([]int{2, 28, 28}, make([]byte, 2*784)))
	f.Add(gz(idx([]int{3}, []byte{1, 2, 3})))
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 0})
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		dims, vals, err := ReadIDX("/f", b)
		if err != nil {
			var ie *IDXError
			if !errors.As(err, &ie) || ie.Path != "/f" {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		n := 1
		for _, d := range dims {
			n *= d
		}
		if n != len(vals) {
			t.Fatalf("dims %v but %d values", dims, len(vals))
		}
	})
}

// Byte images are kept as their pixels; Sample and Gather give exactly the float32 that
// normalizing each byte in float64 gives, for one channel and for three.
func TestByteImagesDecodeAsNormalized(t *testing.T) {
	for _, c := range []int{1, 3} {
		shape := []int{2, 3, c}
		size := 6 * c
		n := 5
		pix := make([]byte, n*size+7) // a larger buffer: the dataset must not keep it
		for i := range pix {
			pix[i] = byte(i*37 + 11)
		}
		mean, std := []float64{0.1, 0.5, 0.9}[:c], []float64{0.3, 0.25, 0.2}[:c]
		d := byteImageDataset("bytes", shape, 3, pix[:n*size], make([]int32, n), n, "", &Stats{mean, std})
		if d.X != nil || len(d.pix) != n*size {
			t.Fatalf("C=%d: X %d values, pixels %d; want only %d bytes", c, len(d.X), len(d.pix), n*size)
		}
		want := func(i, j int) float32 {
			v := pix[i*size+j]
			return float32((float64(v)/255 - mean[j%c]) / std[j%c])
		}
		idx := []int{4, 0, 2, 2}
		x, _ := d.Gather(idx)
		if len(x) != len(idx)*size {
			t.Fatalf("C=%d: gathered %d values, want %d", c, len(x), len(idx)*size)
		}
		for k, i := range idx {
			s := d.Sample(i)
			for j := range size {
				if x[k*size+j] != want(i, j) || s[j] != want(i, j) {
					t.Fatalf("C=%d sample %d value %d: gathered %v, sample %v, want %v", c, i, j, x[k*size+j], s[j], want(i, j))
				}
			}
		}
		if got := d.NormalizeBytes(pix[size : 2*size]); !slices.Equal(got, d.Sample(1)) {
			t.Errorf("C=%d: NormalizeBytes %v, Sample(1) %v", c, got, d.Sample(1))
		}
		before := d.Sample(0)[0]
		pix[0] ^= 0xff // the caller's buffer is not the dataset's
		if d.Sample(0)[0] != before {
			t.Errorf("C=%d: the dataset reads its caller's buffer", c)
		}
	}
}

// A data file that exists but is not a regular file — a named pipe, a link to a device, a
// symbolic link loop, a directory — is named as such (exit code 2), not reported missing,
// and reading it never blocks.
func TestUnusableDataFilesAreNamed(t *testing.T) {
	for what, create := range map[string]func(p string) error{
		"a named pipe (FIFO)":  func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"a device":             func(p string) error { return os.Symlink("/dev/zero", p) },
		"a symbolic link loop": func(p string) error { return os.Symlink(p, p) },
		"a directory":          func(p string) error { return os.Mkdir(p, 0o755) },
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, "train-images-idx3-ubyte.gz")
		if err := create(p); err != nil {
			t.Fatal(err)
		}
		done := async(func() error { _, err := (&Loader{DataDir: dir}).Load(manifest.DatasetSpec{Name: "mnist"}); return err })
		select {
		case err := <-done:
			var u *UnusableFileError
			if !errors.As(err, &u) || !errors.Is(err, manifest.ErrInvalid) || !strings.Contains(err.Error(), p) ||
				!strings.Contains(err.Error(), "is "+what) {
				t.Errorf("%s: %v, want an input error naming %s as %s", what, err, p, what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: loading did not return in 10 s", what)
		}
	}
}

// async runs f on its own goroutine and delivers its error.
func async(f func() error) <-chan error {
	c := make(chan error, 1)
	go func() { c <- f() }()
	return c
}
