// Package data finds, reads and generates the datasets that partitions are cut from:
// Fashion-MNIST from its IDX files and Synthetic(α, β) from the FedProx generator.
package data

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/fedpipe/fedpipe/pipeline"
)

// Dataset is a pooled dataset: every sample of every official split, in a fixed order.
type Dataset struct {
	Name string
	// X holds the samples back to back, each of prod(Shape) float32 values (NHWC for
	// images), already normalized.
	X []float32
	// Y holds the labels, 0 ≤ y < Classes.
	Y       []int32
	Shape   []int
	Classes int
	// Groups holds each sample's natural client (Synthetic's device), or nil.
	Groups []int32
	// Digest identifies the content (see pipeline.DataDesc).
	Digest string
	// Source is where the data came from, for messages.
	Source string
	// PixelMean and PixelStd undo the normalization of image data (pixel in [0, 1] =
	// value·PixelStd + PixelMean); PixelStd is 0 for data that are not images.
	PixelMean, PixelStd float64
}

// Len is the number of samples.
func (d *Dataset) Len() int { return len(d.Y) }

// SampleSize is the number of values per sample.
func (d *Dataset) SampleSize() int {
	n := 1
	for _, s := range d.Shape {
		n *= s
	}
	return n
}

// Sample returns sample i's values (a view, not a copy).
func (d *Dataset) Sample(i int) []float32 {
	s := d.SampleSize()
	return d.X[i*s : (i+1)*s]
}

// Gather copies the samples at idx, in that order, into contiguous x and y slices.
func (d *Dataset) Gather(idx []int) ([]float32, []int32) {
	s := d.SampleSize()
	x := make([]float32, 0, len(idx)*s)
	y := make([]int32, 0, len(idx))
	for _, i := range idx {
		x = append(x, d.Sample(i)...)
		y = append(y, d.Y[i])
	}
	return x, y
}

// Desc describes the dataset for the stage graph.
func (d *Dataset) Desc() *pipeline.DataDesc {
	return &pipeline.DataDesc{Digest: d.Digest, Shape: d.Shape, Classes: d.Classes, Samples: d.Len(), Source: d.Source}
}

// Loader finds and loads datasets, keeping each loaded one in memory: the partition,
// train and evaluate stages of one invocation read the same files once.
type Loader struct {
	// DataDir is the --data flag (may be empty).
	DataDir string

	mu    sync.Mutex
	cache map[string]*Dataset
}

// Load returns the dataset a spec names, reading or generating it on first use.
func (l *Loader) Load(spec pipeline.DatasetSpec) (*Dataset, error) {
	key := spec.Name + "|" + spec.Path
	if spec.Name == "synthetic" {
		key = fmt.Sprintf("synthetic|%v|%v|%d|%d|%d", spec.Alpha, spec.Beta, spec.Devices, spec.Features, spec.Classes)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if d, ok := l.cache[key]; ok {
		return d, nil
	}
	var d *Dataset
	var err error
	switch spec.Name {
	case "fmnist":
		var dir string
		if dir, err = l.findFMNIST(spec.Path); err == nil {
			d, err = LoadFashionMNIST(dir)
		}
	case "synthetic":
		d = Synthetic(SyntheticParams{Alpha: spec.Alpha, Beta: spec.Beta, Devices: spec.Devices,
			Features: spec.Features, Classes: spec.Classes})
	default:
		err = fmt.Errorf("dataset %s: no loader in this build: %w", spec.Name, pipeline.ErrInvalid)
	}
	if err != nil {
		return nil, err
	}
	if l.cache == nil {
		l.cache = map[string]*Dataset{}
	}
	l.cache[key] = d
	return d, nil
}

// Describe loads the dataset and describes it for the stage graph.
func (l *Loader) Describe(spec pipeline.DatasetSpec) (*pipeline.DataDesc, error) {
	d, err := l.Load(spec)
	if err != nil {
		return nil, err
	}
	return d.Desc(), nil
}

// FMNISTSystemDir is where Debian's dataset-fashion-mnist package installs the files.
const FMNISTSystemDir = "/usr/share/datasets/fashion-mnist"

// MissingDataError says which paths were searched for a dataset and how to get it. It is
// an input error (exit code 2).
type MissingDataError struct {
	Dataset  string
	Searched []string
	Missing  string
	Install  string
}

func (e *MissingDataError) Error() string {
	msg := fmt.Sprintf("dataset %s not found: looked for %s in", e.Dataset, e.Missing)
	for _, s := range e.Searched {
		msg += "\n  " + s
	}
	return msg + "\n" + e.Install
}

// Is makes errors.Is(err, pipeline.ErrInvalid) true.
func (e *MissingDataError) Is(target error) bool { return target == pipeline.ErrInvalid }

// findFMNIST picks the directory holding the Fashion-MNIST files: the manifest's path,
// else --data, else $FEDPIPE_DATA, else the Debian package's directory. For --data and
// $FEDPIPE_DATA, a fashion-mnist sub-directory is tried too.
func (l *Loader) findFMNIST(manifestPath string) (string, error) {
	var candidates []string
	switch {
	case manifestPath != "":
		candidates = []string{manifestPath}
	case l.DataDir != "":
		candidates = []string{l.DataDir, filepath.Join(l.DataDir, "fashion-mnist")}
	case os.Getenv("FEDPIPE_DATA") != "":
		e := os.Getenv("FEDPIPE_DATA")
		candidates = []string{e, filepath.Join(e, "fashion-mnist")}
	default:
		candidates = []string{FMNISTSystemDir}
	}
	for _, c := range candidates {
		if _, err := findIDX(c, fmnistFiles[0]); err == nil {
			return c, nil
		}
	}
	return "", &MissingDataError{Dataset: "fmnist", Searched: candidates,
		Missing: fmnistFiles[0] + "[.gz]",
		Install: "Install it with: apt-get install dataset-fashion-mnist (files go to " + FMNISTSystemDir +
			"), or point --data, $FEDPIPE_DATA or the manifest's dataset.path at a directory holding the four IDX files."}
}
