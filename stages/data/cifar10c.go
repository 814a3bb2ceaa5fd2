package data

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fedpipe/fedpipe/manifest"
)

// CIFAR10CFiles is the real CIFAR-10-C release as the shift stage reads it (shift.cifar10c):
// the directory, the labels of one severity block, and the SHA-256 of each file used.
// The corruption images themselves are read one file at a time by Images.
type CIFAR10CFiles struct {
	// Dir holds labels.npy and the <corruption>.npy files.
	Dir string
	// Corruptions are the files used, in the manifest's order.
	Corruptions []string
	// PerSeverity is the number of images of one severity block (10,000 in the release:
	// CIFAR-10's test split; rows/5 of a smaller set).
	PerSeverity int
	// Labels are the labels of the first severity block (every block holds the same
	// images, so the same labels: checked).
	Labels []int32
	// Digest is the SHA-256 over labels.npy's and each corruption file's own SHA-256, in
	// order; it enters the shift stage's key.
	Digest string

	sums map[string]string // file name → hex SHA-256
}

// cifar10cNeeds lists the files of a shift block: labels.npy, then each corruption's.
func cifar10cNeeds(corruptions []string) []string {
	out := []string{"labels.npy"}
	for _, c := range corruptions {
		out = append(out, c+".npy")
	}
	return out
}

// FindCIFAR10C finds the CIFAR-10-C files of the named corruptions (path, else --data,
// else $FEDPIPE_DATA, each directory then its CIFAR-10-C/ and cifar10c/ subfolders),
// reads every one to check its format and hash it, and returns them. A missing file is
// a MissingDataError naming every directory searched; a malformed one a FormatError.
// Results are kept for the loader's lifetime, so planning and running read them once.
func (l *Loader) FindCIFAR10C(path string, corruptions []string) (*CIFAR10CFiles, error) {
	key := "cifar10c-files|" + path + "|" + strings.Join(corruptions, ",")
	l.mu.Lock()
	defer l.mu.Unlock()
	if f, ok := l.c10c[key]; ok {
		return f, nil
	}
	need := cifar10cNeeds(corruptions)
	src := &source{subdirs: byName["cifar10c"].src.subdirs,
		present: func(dir string, _ manifest.DatasetSpec) bool {
			for _, n := range need {
				if !isFile(filepath.Join(dir, n)) {
					return false
				}
			}
			return true
		},
		missing: fixed(strings.Join(need, ", ")),
		install: installHelp("cifar10c")}
	dir, err := l.find(src, manifest.DatasetSpec{Name: "cifar10c", Path: path})
	if err != nil {
		if m, ok := err.(*MissingDataError); ok && path == "" && l.DataDir == "" && os.Getenv("FEDPIPE_DATA") == "" {
			m.Searched = []string{"(nowhere: no shift.cifar10c_path, --data or $FEDPIPE_DATA given)"}
		}
		return nil, err
	}
	f := &CIFAR10CFiles{Dir: dir, Corruptions: append([]string(nil), corruptions...), sums: map[string]string{}}
	all := sha256.New()
	var labels *NPY
	for _, name := range need {
		p := filepath.Join(dir, name)
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(raw)
		f.sums[name] = hex.EncodeToString(sum[:])
		fmt.Fprintf(all, "%s %s\n", name, f.sums[name])
		a, err := ReadNPY(p, raw)
		if err != nil {
			return nil, err
		}
		if name == "labels.npy" {
			if labels, err = f.checkLabels(p, a); err != nil {
				return nil, err
			}
			continue
		}
		if a.Kind != "u1" || len(a.Shape) != 4 || a.Shape[1] != 32 || a.Shape[2] != 32 || a.Shape[3] != 3 || a.Shape[0] != labels.Len() {
			return nil, &FormatError{p, "CIFAR-10-C array", fmt.Sprintf("%s array of shape %v, want uint8 [%d 32 32 3] (one image per entry of labels.npy)", a.Kind, a.Shape, labels.Len())}
		}
	}
	f.Digest = "sha256:" + hex.EncodeToString(all.Sum(nil))
	if l.c10c == nil {
		l.c10c = map[string]*CIFAR10CFiles{}
	}
	l.c10c[key] = f
	return f, nil
}

// checkLabels checks labels.npy (5·n labels in 0..9, the same n labels in every severity
// block) and keeps the first block's.
func (f *CIFAR10CFiles) checkLabels(p string, a *NPY) (*NPY, error) {
	bad := func(format string, args ...any) error {
		return &FormatError{p, "CIFAR-10-C labels", fmt.Sprintf(format, args...)}
	}
	if a.Kind == "f4" || a.Kind == "f8" || len(a.Shape) != 1 || a.Len() == 0 || a.Len()%5 != 0 {
		return nil, bad("%s array of shape %v, want integers [5·n] (n labels per severity)", a.Kind, a.Shape)
	}
	n := a.Len() / 5
	f.PerSeverity = n
	f.Labels = make([]int32, n)
	for i := 0; i < a.Len(); i++ {
		l := a.Int(i)
		if l < 0 || l > 9 {
			return nil, bad("label %d at %d outside 0..9", l, i)
		}
		if i < n {
			f.Labels[i] = int32(l)
		} else if int32(l) != f.Labels[i%n] {
			return nil, bad("label %d at %d differs from %d at %d: every severity block must hold the same images", l, i, f.Labels[i%n], i%n)
		}
	}
	return a, nil
}

// Check checks that the files corrupt ds's official test split: ds must be CIFAR-10
// (pooled train then test, TestStart set), its test split as long as one severity block,
// with the same labels in the same order.
func (f *CIFAR10CFiles) Check(ds *Dataset) error {
	p := filepath.Join(f.Dir, "labels.npy")
	if ds.Name != "cifar10" || ds.TestStart <= 0 {
		return fmt.Errorf("CIFAR-10-C replaces CIFAR-10 test images; dataset %s has no CIFAR-10 test split: %w", ds.Name, manifest.ErrInvalid)
	}
	if n := ds.Len() - ds.TestStart; n != f.PerSeverity {
		return &FormatError{p, "CIFAR-10-C labels", fmt.Sprintf("%d images per severity, but CIFAR-10's test split in %s has %d: the files must corrupt exactly that split", f.PerSeverity, ds.Source, n)}
	}
	for i, l := range f.Labels {
		if y := ds.Y[ds.TestStart+i]; y != l {
			return &FormatError{p, "CIFAR-10-C labels", fmt.Sprintf("label %d at %d, but CIFAR-10's test image %d (%s) has label %d: the files must follow test_batch.bin's order", l, i, i, ds.Source, y)}
		}
	}
	return nil
}

// Images reads one corruption's images (uint8 NHWC, 5·PerSeverity of them, severity 1
// first) and checks they are the bytes the files were found with.
func (f *CIFAR10CFiles) Images(corruption string) ([]byte, error) {
	name := corruption + ".npy"
	want, ok := f.sums[name]
	if !ok {
		return nil, fmt.Errorf("CIFAR-10-C corruption %s was not among those found (%v)", corruption, f.Corruptions)
	}
	p := filepath.Join(f.Dir, name)
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != want {
		return nil, fmt.Errorf("%s changed while running (its SHA-256 is not the one planned with)", p)
	}
	a, err := ReadNPY(p, raw)
	if err != nil {
		return nil, err
	}
	return a.Data, nil
}

// ShiftFiles is pipeline.BuildOptions.ShiftFiles for CIFAR-10 (the one dataset with
// manifest.DatasetDef.RealCorruptions): it finds the CIFAR-10-C files of a shift block,
// checks them against the run's dataset and returns their digest.
func (l *Loader) ShiftFiles(shift manifest.ShiftSpec, spec manifest.DatasetSpec) (string, error) {
	f, err := l.FindCIFAR10C(shift.CIFAR10CPath, shift.CIFAR10C)
	if err != nil {
		return "", err
	}
	ds, err := l.Load(spec)
	if err != nil {
		return "", err
	}
	if err := f.Check(ds); err != nil {
		return "", err
	}
	return f.Digest, nil
}

// NormalizeBytes turns uint8 NHWC pixels into samples normalized exactly as d's own
// images are: float32((px/255 − mean)/std) per channel, computed in float64, as
// byteImageDataset does.
func (d *Dataset) NormalizeBytes(pix []byte) []float32 {
	lut := d.lut
	if lut == nil {
		lut = byteTables(d.PixelMean, d.PixelStd)
	}
	x := make([]float32, len(pix))
	decodeBytes(x, pix, lut)
	return x
}
