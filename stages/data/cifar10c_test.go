package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// tinyCIFAR10 writes a CIFAR-10 folder of 5 × 2 training records and a 4-image test split
// (labels 3, 1, 4, 1) and returns it.
func tinyCIFAR10(t *testing.T, dir string) {
	t.Helper()
	for k := 1; k <= 5; k++ {
		write(t, filepath.Join(dir, fmt.Sprintf("data_batch_%d.bin", k)), append(cifarRecord([]byte{byte(k)}, k), cifarRecord([]byte{0}, 100+k)...))
	}
	var test []byte
	for i, l := range []byte{3, 1, 4, 1} {
		test = append(test, cifarRecord([]byte{l}, 200+i)...)
	}
	write(t, filepath.Join(dir, "test_batch.bin"), test)
}

// tinyCIFAR10C writes labels.npy (the test labels, five times) and one file per
// corruption whose image j of severity s has every byte equal to 10s + j + add.
func tinyCIFAR10C(t *testing.T, dir string, labels []int64, add byte, corruptions ...string) {
	t.Helper()
	n := len(labels)
	var lab []byte
	for s := 0; s < 5; s++ {
		for _, l := range labels {
			lab = binary.LittleEndian.AppendUint64(lab, uint64(l))
		}
	}
	write(t, filepath.Join(dir, "labels.npy"), npy(1, "<i8", []int{5 * n}, lab))
	for _, c := range corruptions {
		img := make([]byte, 0, 5*n*cifarPixels)
		for s := 0; s < 5; s++ {
			for j := 0; j < n; j++ {
				for range cifarPixels {
					img = append(img, byte(10*s+j)+add)
				}
			}
		}
		write(t, filepath.Join(dir, c+".npy"), npy(1, "|u1", []int{5 * n, 32, 32, 3}, img))
	}
}

func TestFindCIFAR10C(t *testing.T) {
	root := t.TempDir()
	tinyCIFAR10(t, filepath.Join(root, "cifar10"))
	c10c := filepath.Join(root, "CIFAR-10-C")
	tinyCIFAR10C(t, c10c, []int64{3, 1, 4, 1}, 0, "fog", "gaussian_noise")
	l := &Loader{DataDir: root}
	ds, err := l.Load(manifest.DatasetSpec{Name: "cifar10"})
	if err != nil {
		t.Fatal(err)
	}
	if ds.TestStart != 10 {
		t.Fatalf("TestStart %d, want 10 (after the five training batches)", ds.TestStart)
	}
	// Found through --data's CIFAR-10-C/ subfolder.
	f, err := l.FindCIFAR10C("", []string{"fog", "gaussian_noise"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Dir != c10c || f.PerSeverity != 4 || fmt.Sprint(f.Labels) != "[3 1 4 1]" || !strings.HasPrefix(f.Digest, "sha256:") {
		t.Fatalf("found %+v", f)
	}
	if err := f.Check(ds); err != nil {
		t.Fatal(err)
	}
	pix, err := f.Images("fog")
	if err != nil || len(pix) != 20*cifarPixels || pix[(2*4+3)*cifarPixels] != 23 {
		t.Fatalf("fog images: %d bytes, %v", len(pix), err)
	}
	// Normalized as the dataset's own images.
	x := ds.NormalizeBytes([]byte{0, 128, 255})
	for k, v := range []byte{0, 128, 255} {
		if want := float32((float64(v)/255 - CIFAR10Stats.Mean[k]) / CIFAR10Stats.Std[k]); x[k] != want {
			t.Errorf("channel %d: %v, want %v", k, x[k], want)
		}
	}
	if d, err := l.ShiftFiles(manifest.ShiftSpec{CIFAR10C: []string{"fog", "gaussian_noise"}}, manifest.DatasetSpec{Name: "cifar10"}); err != nil || d != f.Digest {
		t.Errorf("CIFAR10C = %s, %v", d, err)
	}

	// One byte of a .npy changes the digest; reading the changed file is refused.
	p := filepath.Join(c10c, "fog.npy")
	raw, _ := os.ReadFile(p)
	raw[len(raw)-1] ^= 1
	write(t, p, raw)
	if _, err := f.Images("fog"); err == nil || !strings.Contains(err.Error(), "changed while running") {
		t.Errorf("changed file read without complaint: %v", err)
	}
	g, err := (&Loader{}).FindCIFAR10C(c10c, []string{"fog", "gaussian_noise"})
	if err != nil || g.Digest == f.Digest {
		t.Errorf("digest unchanged after a byte changed (%v)", err)
	}

	// A missing corruption names every directory searched and where to get the files.
	_, err = (&Loader{DataDir: root}).FindCIFAR10C("", []string{"frost"})
	var miss *MissingDataError
	if !errors.As(err, &miss) || !strings.Contains(err.Error(), "frost.npy") || !strings.Contains(err.Error(), c10c) ||
		!strings.Contains(err.Error(), filepath.Join(root, "cifar10c")) || !strings.Contains(err.Error(), "zenodo") {
		t.Errorf("missing corruption: %v", err)
	}
	if _, err := (&Loader{}).FindCIFAR10C("", []string{"fog"}); !errors.Is(err, manifest.ErrInvalid) || !strings.Contains(err.Error(), "no shift.cifar10c_path") {
		t.Errorf("nowhere to look: %v", err)
	}

	// Files that do not follow the test split: other labels, another length, blocks that differ.
	bad := filepath.Join(root, "bad")
	tinyCIFAR10C(t, bad, []int64{3, 1, 1, 4}, 0, "fog")
	h, err := (&Loader{}).FindCIFAR10C(bad, []string{"fog"})
	if err != nil {
		t.Fatal(err)
	}
	wantFormatError(t, h.Check(ds), filepath.Join(bad, "labels.npy"), "follow test_batch.bin's order")
	tinyCIFAR10C(t, bad, []int64{3, 1, 4}, 0, "fog")
	h, _ = (&Loader{}).FindCIFAR10C(bad, []string{"fog"})
	wantFormatError(t, h.Check(ds), filepath.Join(bad, "labels.npy"), "3 images per severity, but CIFAR-10's test split")
	var lab []byte
	for i := range 10 {
		lab = binary.LittleEndian.AppendUint64(lab, uint64(i%3))
	}
	write(t, filepath.Join(bad, "labels.npy"), npy(1, "<i8", []int{10}, lab))
	_, err = (&Loader{}).FindCIFAR10C(bad, []string{"fog"})
	wantFormatError(t, err, filepath.Join(bad, "labels.npy"), "every severity block must hold the same images")
}

// NormalizeBytes gives a CIFAR-10-C image exactly the values the run's own copy of that
// image has, in every normalize mode.
func TestNormalizeBytesMatchesDataset(t *testing.T) {
	dir := t.TempDir()
	tinyCIFAR10(t, dir)
	rec := cifarRecord([]byte{4}, 202)[1:] // test image 2, channel-planar
	nhwc := make([]byte, cifarPixels)
	for i := 0; i < 1024; i++ {
		nhwc[3*i], nhwc[3*i+1], nhwc[3*i+2] = rec[i], rec[1024+i], rec[2048+i]
	}
	for _, mode := range []string{"", "none", "imagenet"} {
		ds, err := LoadCIFAR10(dir, mode)
		if err != nil {
			t.Fatal(err)
		}
		got, want := ds.NormalizeBytes(nhwc), ds.Sample(ds.TestStart+2)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("normalize %q: value %d is %v, the dataset's %v", mode, i, got[i], want[i])
			}
		}
	}
}
