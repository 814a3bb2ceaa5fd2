package train

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/safetensors"
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// InitialModel returns the run's initial global model: the seeded initialization of spec,
// with model.init's tensors in place of it when set. The file is a safetensors file of F32
// tensors with fedpipe's names and layouts (model.ModelSpec; docs/methods.md shows the
// conversion of torchvision's resnet18). Every parameter must be in the file with its
// exact shape, except the classifier (classifier.*): when the file lacks it or its class
// count differs (ImageNet's 1000 classes for OfficeHome's 65), it keeps the seeded
// initialization. A missing or unreadable file, a missing or unknown name or a wrong shape
// is invalid input (manifest.ErrInvalid).
func InitialModel(r *manifest.Run, spec model.ModelSpec) (tensor.List, error) {
	base := spec.Init(initSeed(r))
	path := r.Model.Init
	if path == "" {
		return base, nil
	}
	file, err := safetensors.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: model.init: %s does not exist: give the path of a safetensors file of initial weights", manifest.ErrInvalid, path)
		}
		return nil, fmt.Errorf("%w: model.init: %v", manifest.ErrInvalid, err)
	}
	return applyInit(base, file, path, spec.Arch)
}

// applyInit puts the file's tensors into base (see InitialModel).
func applyInit(base, file tensor.List, path, arch string) (tensor.List, error) {
	out := base.Clone()
	for _, t := range file {
		if out.Find(t.Name) < 0 {
			return nil, fmt.Errorf("%w: model.init: %s holds %q, which is not a parameter of %s (names are fedpipe's: see docs/methods.md, Initial weights)",
				manifest.ErrInvalid, path, t.Name, arch)
		}
	}
	// The classifier is taken from the file only if all of it is there with its shapes.
	keepHead := true
	for _, p := range out {
		if j := file.Find(p.Name); strings.HasPrefix(p.Name, "classifier.") && (j < 0 || !slices.Equal(file[j].Shape, p.Shape)) {
			keepHead = false
		}
	}
	for i, p := range out {
		j := file.Find(p.Name)
		head := strings.HasPrefix(p.Name, "classifier.")
		switch {
		case head && !keepHead:
			continue // absent or another class count: re-initialized
		case j < 0:
			return nil, fmt.Errorf("%w: model.init: %s lacks %q (shape %v) of %s", manifest.ErrInvalid, path, p.Name, p.Shape, arch)
		case !slices.Equal(file[j].Shape, p.Shape):
			return nil, fmt.Errorf("%w: model.init: %s has %q with shape %v, %s needs %v (layouts: convolutions [kh, kw, in, out], dense [in, out])",
				manifest.ErrInvalid, path, p.Name, file[j].Shape, arch, p.Shape)
		}
		out[i] = file[j].Clone()
	}
	return out, nil
}
