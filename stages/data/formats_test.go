package data

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantFormatError checks that err is an input error naming path and saying what.
func wantFormatError(t *testing.T, err error, path, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("malformed %s accepted", path)
	}
	if !errors.Is(err, manifest.ErrInvalid) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), what) {
		t.Errorf("error %q: want an input error naming %s and saying %q", err, path, what)
	}
}

// unnorm undoes a dataset's normalization of value v at flat index i of a sample.
func unnorm(d *Dataset, i int, v float32) float64 {
	c := i % d.Shape[2]
	return float64(v)*d.PixelStd[c] + d.PixelMean[c]
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-5 }

// cifarRecord is one CIFAR binary record whose pixel at (r, c) of channel ch is
// (seed + 3r + 5c + 7ch) mod 256.
func cifarRecord(labels []byte, seed int) []byte {
	b := append([]byte(nil), labels...)
	for ch := 0; ch < 3; ch++ {
		for r := 0; r < 32; r++ {
			for c := 0; c < 32; c++ {
				b = append(b, byte((seed+3*r+5*c+7*ch)%256))
			}
		}
	}
	return b
}

func TestCIFAR10BinaryLayoutAndOrder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cifar-10-batches-bin")
	for k := 1; k <= 5; k++ {
		write(t, filepath.Join(dir, fmt.Sprintf("data_batch_%d.bin", k)), append(cifarRecord([]byte{byte(k)}, k), cifarRecord([]byte{0}, 100+k)...))
	}
	write(t, filepath.Join(dir, "test_batch.bin"), cifarRecord([]byte{9}, 50))
	// Found through --data's per-dataset subfolder.
	l := &Loader{DataDir: filepath.Dir(dir)}
	d, err := l.Load(manifest.DatasetSpec{Name: "cifar10"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 11 || fmt.Sprint(d.Y) != "[1 0 2 0 3 0 4 0 5 0 9]" || fmt.Sprint(d.Shape) != "[32 32 3]" {
		t.Fatalf("%d samples, labels %v, shape %v", d.Len(), d.Y, d.Shape)
	}
	s := d.Sample(10) // test record, seed 50
	for _, p := range [][3]int{{0, 0, 0}, {0, 1, 2}, {31, 2, 1}} {
		i := (p[0]*32+p[1])*3 + p[2]
		want := float64((50+3*p[0]+5*p[1]+7*p[2])%256) / 255
		if got := unnorm(d, i, s[i]); !near(got, want) {
			t.Errorf("pixel r%d c%d ch%d = %v, want %v", p[0], p[1], p[2], got, want)
		}
	}
	if d.PixelMean[1] != CIFAR10Stats.Mean[1] || !strings.HasPrefix(d.Digest, "sha256:") {
		t.Errorf("stats %v, digest %s", d.PixelMean, d.Digest)
	}
	// Changing one byte changes the digest.
	write(t, filepath.Join(dir, "test_batch.bin"), cifarRecord([]byte{8}, 50))
	d2, err := LoadCIFAR10(dir, "")
	if err != nil || d2.Digest == d.Digest {
		t.Errorf("digest unchanged after editing a file (%v)", err)
	}
	write(t, filepath.Join(dir, "data_batch_3.bin"), cifarRecord([]byte{1}, 0)[:3000])
	_, err = LoadCIFAR10(dir, "")
	wantFormatError(t, err, filepath.Join(dir, "data_batch_3.bin"), "not a whole number of 3073-byte records")
}

func TestCIFAR100FineLabels(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "train.bin"), append(cifarRecord([]byte{3, 77}, 1), cifarRecord([]byte{19, 99}, 2)...))
	write(t, filepath.Join(dir, "test.bin"), cifarRecord([]byte{0, 5}, 3))
	d, err := LoadCIFAR100(dir, "none")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(d.Y) != "[77 99 5]" || d.Classes != 100 {
		t.Errorf("labels %v classes %d, want the fine labels [77 99 5]", d.Y, d.Classes)
	}
	if got := d.Sample(1)[3*1+1]; !near(float64(got), float64((2+5+7)%256)/255) { // r0 c1 G, normalize: none
		t.Errorf("normalize none: pixel %v", got)
	}
	write(t, filepath.Join(dir, "test.bin"), cifarRecord([]byte{0, 100}, 3))
	_, err = LoadCIFAR100(dir, "")
	wantFormatError(t, err, filepath.Join(dir, "test.bin"), "label 100")
}

// npy encodes an array as a .npy file of the given format version.
func npy(version byte, descr string, shape []int, data []byte) []byte {
	dims := ""
	for _, s := range shape {
		dims += fmt.Sprintf("%d, ", s)
	}
	if len(shape) > 1 {
		dims = strings.TrimSuffix(dims, " ")
		dims = strings.TrimSuffix(dims, ",")
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims)
	pre := 10
	if version > 1 {
		pre = 12
	}
	for (pre+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := []byte("\x93NUMPY")
	b = append(b, version, 0)
	if version == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(h)))
	}
	return append(append(b, h...), data...)
}

func TestNPYReader(t *testing.T) {
	var f32 []byte
	for _, v := range []float32{1.5, -2, 0.25} {
		f32 = binary.LittleEndian.AppendUint32(f32, math.Float32bits(v))
	}
	var i64 []byte
	for _, v := range []int64{7, -1} {
		i64 = binary.LittleEndian.AppendUint64(i64, uint64(v))
	}
	a, err := ReadNPY("f", npy(1, "<f4", []int{3}, f32))
	if err != nil || a.Len() != 3 || a.Float(1) != -2 || a.Float(2) != 0.25 {
		t.Fatalf("float32: %+v %v", a, err)
	}
	a, err = ReadNPY("i", npy(2, "<i8", []int{2, 1}, i64))
	if err != nil || fmt.Sprint(a.Shape) != "[2 1]" || a.Int(0) != 7 || a.Int(1) != -1 {
		t.Fatalf("int64 v2: %+v %v", a, err)
	}
	a, err = ReadNPY("u", npy(1, "|u1", []int{2, 2}, []byte{1, 2, 3, 4}))
	if err != nil || a.Int(3) != 4 {
		t.Fatalf("uint8: %+v %v", a, err)
	}
	for name, b := range map[string][]byte{
		"big-endian":     npy(1, ">f4", []int{3}, f32),
		"short data":     npy(1, "<f4", []int{4}, f32),
		"unknown dtype":  npy(1, "<c8", []int{1}, f32[:8]),
		"no magic":       []byte("NUMPY-ish file"),
		"fortran order":  []byte(strings.Replace(string(npy(1, "<f4", []int{3}, f32)), "False", "True", 1)),
		"header too big": append([]byte("\x93NUMPY\x01\x00"), 0xff, 0xff, '{'),
	} {
		if _, err := ReadNPY("/d/x.npy", b); !errors.Is(err, manifest.ErrInvalid) || !strings.Contains(err.Error(), "/d/x.npy") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCIFAR10CSeverityBlocks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "CIFAR-10-C")
	const n = 10 // 5 severities × 2 images
	img := make([]byte, n*cifarPixels)
	for s := 0; s < n; s++ {
		for i := 0; i < cifarPixels; i++ {
			img[s*cifarPixels+i] = byte(s*20 + i%3) // NHWC: channel = i mod 3
		}
	}
	var lab []byte
	for s := 0; s < n; s++ {
		lab = binary.LittleEndian.AppendUint64(lab, uint64(s%10))
	}
	write(t, filepath.Join(dir, "fog.npy"), npy(1, "|u1", []int{n, 32, 32, 3}, img))
	write(t, filepath.Join(dir, "labels.npy"), npy(1, "<i8", []int{n}, lab))
	d, err := LoadCIFAR10C(dir, "fog", 3)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 2 || fmt.Sprint(d.Y) != "[4 5]" {
		t.Fatalf("severity 3: labels %v, want images 4 and 5", d.Y)
	}
	if got := unnorm(d, 2, d.Sample(1)[2]); !near(got, float64(5*20+2)/255) {
		t.Errorf("pixel %v, want %v", got, float64(102)/255)
	}
	l := &Loader{DataDir: filepath.Dir(dir)}
	all, err := l.Load(manifest.DatasetSpec{Name: "cifar10c", Variant: "fog"})
	if err != nil || all.Len() != n {
		t.Fatalf("severity 0 should pool all %d images: %v", n, err)
	}
	if one, err := l.Load(manifest.DatasetSpec{Name: "cifar10c", Variant: "fog", Severity: 1}); err != nil || one.Len() != 2 || one == all {
		t.Fatalf("the loader's cache mixed up severities: %v", err)
	}
	_, err = l.Load(manifest.DatasetSpec{Name: "cifar10c", Variant: "frost", Severity: 1})
	var miss *MissingDataError
	if !errors.As(err, &miss) || !strings.Contains(err.Error(), "frost.npy") || !strings.Contains(err.Error(), "zenodo") {
		t.Errorf("missing corruption: %v", err)
	}
	write(t, filepath.Join(dir, "fog.npy"), npy(1, "|u1", []int{n, 32, 32, 1}, img[:n*1024]))
	_, err = LoadCIFAR10C(dir, "fog", 1)
	wantFormatError(t, err, filepath.Join(dir, "fog.npy"), "want uint8 [5·n 32 32 3]")
}

func TestMNISTAndEMNISTTransposed(t *testing.T) {
	dir := t.TempDir()
	img := make([]byte, 2*784)
	img[5] = 255 // stored row 0, column 5
	write(t, filepath.Join(dir, "train-images-idx3-ubyte.gz"), gz(idx([]int{1, 28, 28}, img[:784])))
	write(t, filepath.Join(dir, "train-labels-idx1-ubyte.gz"), gz(idx([]int{1}, []byte{7})))
	write(t, filepath.Join(dir, "t10k-images-idx3-ubyte"), idx([]int{1, 28, 28}, img[784:]))
	write(t, filepath.Join(dir, "t10k-labels-idx1-ubyte"), idx([]int{1}, []byte{2}))
	d, err := LoadMNIST(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(d.Y) != "[7 2]" || !near(unnorm(d, 5, d.Sample(0)[5]), 1) || d.PixelMean[0] != MNISTStats.Mean[0] {
		t.Errorf("mnist: labels %v, pixel 5 %v", d.Y, unnorm(d, 5, d.Sample(0)[5]))
	}
	write(t, filepath.Join(dir, "t10k-images-idx3-ubyte"), idx([]int{1, 28, 27}, img[:28*27]))
	_, err = LoadMNIST(dir, "")
	wantFormatError(t, err, filepath.Join(dir, "t10k-images-idx3-ubyte"), "image dimensions [1 28 27], want [n 28 28]")
	edir := filepath.Join(t.TempDir(), "gzip")
	for _, sp := range []string{"train", "test"} {
		write(t, filepath.Join(edir, "emnist-letters-"+sp+"-images-idx3-ubyte.gz"), gz(idx([]int{1, 28, 28}, img[:784])))
		write(t, filepath.Join(edir, "emnist-letters-"+sp+"-labels-idx1-ubyte.gz"), gz(idx([]int{1}, []byte{26})))
	}
	l := &Loader{DataDir: filepath.Dir(edir)}
	e, err := l.Load(manifest.DatasetSpec{Name: "emnist", Variant: "letters"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Classes != 26 || fmt.Sprint(e.Y) != "[25 25]" {
		t.Errorf("letters: classes %d labels %v, want 26 and [25 25]", e.Classes, e.Y)
	}
	// Stored (0, 5) is row 5, column 0 once transposed.
	if e.Sample(0)[5*28] <= e.Sample(0)[5] || e.Sample(0)[5*28] <= e.Sample(0)[1] {
		t.Errorf("EMNIST not transposed: (5,0)=%v (0,5)=%v", e.Sample(0)[5*28], e.Sample(0)[5])
	}
	if _, err := l.Load(manifest.DatasetSpec{Name: "emnist"}); !strings.Contains(fmt.Sprint(err), "emnist-byclass-train-images-idx3-ubyte") {
		t.Errorf("default split byclass not looked for: %v", err)
	}
	write(t, filepath.Join(edir, "emnist-letters-test-labels-idx1-ubyte.gz"), gz(idx([]int{1}, []byte{0})))
	_, err = LoadEMNIST(edir, "letters", "")
	wantFormatError(t, err, "emnist-letters-test-labels-idx1-ubyte.gz", "label 0 out of range 1..26")
}

// matElement encodes one MAT v5 data element, padded to 8 bytes.
func matElement(typ uint32, data []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, typ)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	b = append(b, data...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// matMatrix encodes a numeric miMATRIX of class cls named name, stored as dataType.
func matMatrix(name string, cls byte, dims []int32, dataType uint32, data []byte) []byte {
	flags := []byte{cls, 0, 0, 0, 0, 0, 0, 0}
	var d []byte
	for _, x := range dims {
		d = binary.LittleEndian.AppendUint32(d, uint32(x))
	}
	body := matElement(miUINT32, flags)
	body = append(body, matElement(miINT32, d)...)
	if len(name) <= 4 { // small data element format, as MATLAB writes short names
		small := binary.LittleEndian.AppendUint32(nil, uint32(len(name))<<16|miINT8)
		body = append(body, append(small, append([]byte(name), make([]byte, 4-len(name))...)...)...)
	} else {
		body = append(body, matElement(miINT8, []byte(name))...)
	}
	body = append(body, matElement(dataType, data)...)
	return matElement(miMATRIX, body)
}

func compressed(elem []byte) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(elem)
	w.Close()
	b := binary.LittleEndian.AppendUint32(nil, miCOMPRESSED)
	b = binary.LittleEndian.AppendUint32(b, uint32(z.Len()))
	return append(b, z.Bytes()...) // compressed elements are not padded
}

func matHeader() []byte {
	h := make([]byte, 128)
	copy(h, "MATLAB 5.0 MAT-file, written by a fedpipe test")
	for i := 46; i < 116; i++ {
		h[i] = ' '
	}
	binary.LittleEndian.PutUint16(h[124:], 0x0100)
	copy(h[126:], "IM")
	return h
}

// svhnMAT builds a real SVHN-style .mat: X (uint8, compressed) and y (double class
// stored as uint8, plain), pixel (r, c, ch) of image s = s + r + 2c + 3ch.
func svhnMAT(labels []byte) []byte {
	n := len(labels)
	x := make([]byte, 3072*n)
	for s := 0; s < n; s++ {
		for ch := 0; ch < 3; ch++ {
			for c := 0; c < 32; c++ {
				for r := 0; r < 32; r++ {
					x[r+32*c+1024*ch+3072*s] = byte(s + r + 2*c + 3*ch)
				}
			}
		}
	}
	b := matHeader()
	b = append(b, compressed(matMatrix("X", 9, []int32{32, 32, 3, int32(n)}, miUINT8, x))...)
	b = append(b, matMatrix("y", 6, []int32{int32(n), 1}, miUINT8, labels)...)
	return b
}

func TestSVHNMatV5(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "train_32x32.mat"), svhnMAT([]byte{10, 3}))
	write(t, filepath.Join(dir, "test_32x32.mat"), svhnMAT([]byte{1}))
	d, err := LoadSVHN(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(d.Y) != "[0 3 1]" {
		t.Errorf("labels %v, want [0 3 1] (10 is the digit 0)", d.Y)
	}
	s := d.Sample(1)
	for _, p := range [][3]int{{0, 0, 0}, {4, 9, 2}, {31, 0, 1}} {
		i := (p[0]*32+p[1])*3 + p[2]
		if got, want := unnorm(d, i, s[i]), float64(1+p[0]+2*p[1]+3*p[2])/255; !near(got, want) {
			t.Errorf("r%d c%d ch%d = %v, want %v", p[0], p[1], p[2], got, want)
		}
	}
	// A double-stored y decodes too.
	var y []byte
	for _, v := range []float64{10, 2} {
		y = binary.LittleEndian.AppendUint64(y, math.Float64bits(v))
	}
	vars, err := ReadMAT("m", append(matHeader(), matMatrix("yy", 6, []int32{2, 1}, miDOUBLE, y)...))
	if err != nil || vars["yy"].At(0) != 10 || vars["yy"].At(1) != 2 {
		t.Fatalf("double y: %v", err)
	}
	bad := svhnMAT([]byte{1})
	bad = bad[:200] // cuts the compressed X element
	write(t, filepath.Join(dir, "test_32x32.mat"), bad)
	_, err = LoadSVHN(dir, "")
	wantFormatError(t, err, filepath.Join(dir, "test_32x32.mat"), "not a valid MATLAB v5 .mat file")
	write(t, filepath.Join(dir, "test_32x32.mat"), svhnMAT([]byte{11}))
	_, err = LoadSVHN(dir, "")
	wantFormatError(t, err, filepath.Join(dir, "test_32x32.mat"), "want 1..10")
}

func npz(t *testing.T, members map[string][]byte) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, name := range []string{"train_images", "train_labels", "val_images", "val_labels", "test_images", "test_labels"} {
		if members[name] == nil {
			continue
		}
		f, err := w.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(members[name])
	}
	w.Close()
	return b.Bytes()
}

func TestMedMNISTNPZ(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "medmnist")
	m := map[string][]byte{}
	for k, sp := range []string{"train", "val", "test"} {
		img := make([]byte, 2*28*28)
		for i := range img {
			img[i] = byte(k*50 + i%7)
		}
		m[sp+"_images"] = npy(1, "|u1", []int{2, 28, 28}, img)
		m[sp+"_labels"] = npy(1, "|u1", []int{2, 1}, []byte{byte(k), 10})
	}
	write(t, filepath.Join(dir, "organamnist.npz"), npz(t, m))
	l := &Loader{DataDir: filepath.Dir(dir)}
	d, err := l.Load(manifest.DatasetSpec{Name: "medmnist", Variant: "organamnist"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 6 || d.Classes != 11 || fmt.Sprint(d.Y) != "[0 10 1 10 2 10]" || fmt.Sprint(d.Shape) != "[28 28 1]" {
		t.Fatalf("%d samples, classes %d, labels %v, shape %v", d.Len(), d.Classes, d.Y, d.Shape)
	}
	// Statistics come from the two train images: their mean is mean(i mod 7)/255.
	sum := 0.0
	for i := 0; i < 2*784; i++ {
		sum += float64(i%7) / 255
	}
	if !near(d.PixelMean[0], sum/(2*784)) {
		t.Errorf("mean %v, want %v (train images only)", d.PixelMean[0], sum/(2*784))
	}
	if got := unnorm(d, 3, d.Sample(4)[3]); !near(got, float64(100+3)/255) {
		t.Errorf("test pixel %v", got)
	}
	delete(m, "val_labels")
	write(t, filepath.Join(dir, "organamnist.npz"), npz(t, m))
	_, err = LoadMedMNIST(filepath.Join(dir, "organamnist.npz"), "")
	wantFormatError(t, err, filepath.Join(dir, "organamnist.npz"), "val_labels.npy")
	write(t, filepath.Join(dir, "organamnist.npz"), []byte("PK not really"))
	_, err = LoadMedMNIST(filepath.Join(dir, "organamnist.npz"), "")
	wantFormatError(t, err, filepath.Join(dir, "organamnist.npz"), "not a zip file")
}

func TestNormalizeModes(t *testing.T) {
	dir := t.TempDir()
	writeFMNIST(t, dir, 2, 1, true)
	for _, c := range []struct {
		mode        string
		white, mean float64
	}{
		{"", (1 - FMNISTMean) / FMNISTStd, FMNISTMean},
		{"none", 1, 0},
		{"imagenet", (1 - 0.449) / (0.678 / 3), 0.449}, // ImageNet's channel means averaged for gray
	} {
		d, err := (&Loader{}).Load(manifest.DatasetSpec{Name: "fmnist", Path: dir, Normalize: c.mode})
		if err != nil {
			t.Fatal(err)
		}
		if !near(float64(d.Sample(0)[0]), c.white) || !near(d.PixelMean[0], c.mean) || !near(unnorm(d, 0, d.Sample(0)[0]), 1) {
			t.Errorf("normalize %q: white pixel %v (want %v), mean %v", c.mode, d.Sample(0)[0], c.white, d.PixelMean)
		}
	}
}

// FuzzReadMAT: any bytes parse into arrays whose data match their dimensions, or fail
// with a FormatError naming the path; never a panic.
func FuzzReadMAT(f *testing.F) {
	f.Add(svhnMAT([]byte{1, 10}))
	f.Add(append(matHeader(), matMatrix("y", 6, []int32{2, 1}, miUINT8, []byte{1, 2})...))
	f.Add(matHeader())
	f.Fuzz(func(t *testing.T, b []byte) {
		vars, err := ReadMAT("/f.mat", b)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Path != "/f.mat" {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		for name, a := range vars {
			n := 1
			for _, d := range a.Dims {
				n *= d
			}
			if n != a.Len() {
				t.Fatalf("%s: dims %v but %d elements", name, a.Dims, a.Len())
			}
		}
	})
}

// FuzzReadNPY: any bytes parse into an array whose data match its shape, or fail with a
// FormatError naming the path; never a panic.
func FuzzReadNPY(f *testing.F) {
	f.Add(npy(1, "|u1", []int{2, 2}, []byte{1, 2, 3, 4}))
	f.Add(npy(2, "<i8", []int{1}, make([]byte, 8)))
	f.Add(npy(1, "<f4", []int{}, make([]byte, 4)))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ReadNPY("/f.npy", b)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Path != "/f.npy" {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		n := 1
		for _, d := range a.Shape {
			n *= d
		}
		if n != a.Len() {
			t.Fatalf("shape %v but %d elements", a.Shape, a.Len())
		}
	})
}
