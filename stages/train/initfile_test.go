package train

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/safetensors"
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// TestInitFromFile loads initial weights from a safetensors file: every tensor but the
// classifier comes from the file, a classifier of another class count is re-initialized,
// and a missing file, an unknown name and a wrong shape are invalid input naming the file.
func TestInitFromFile(t *testing.T) {
	dir := t.TempDir()
	spec := model.ModelSpec{Arch: model.ArchFedAvgCNN, InputShape: []int{8, 8, 1}, NumClasses: 3}
	other := spec
	other.NumClasses = 5
	r := imageRun("fedavg", spec.Arch)
	write := func(name string, l tensor.List) string {
		var buf bytes.Buffer
		if err := safetensors.Encode(&buf, l); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pretrained := other.Init(99) // a "pretrained" model with 5 classes
	r.Model.Init = write("pretrained.safetensors", pretrained)
	got, err := InitialModel(r, spec)
	if err != nil {
		t.Fatal(err)
	}
	seeded := spec.Init(initSeed(r))
	for i, p := range got {
		want := pretrained[pretrained.Find(p.Name)]
		if strings.HasPrefix(p.Name, "classifier.") {
			want = seeded[i]
		}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("%s: not taken from the right source", p.Name)
		}
	}
	same := spec.Init(98)
	r.Model.Init = write("same.safetensors", same)
	if got, err := InitialModel(r, spec); err != nil || !reflect.DeepEqual(got, same) {
		t.Errorf("a file with the model's own classes: %v", err)
	}
	bad := func(name string, l tensor.List, want string) {
		r.Model.Init = name
		if l != nil {
			r.Model.Init = write(name, l)
		} else {
			r.Model.Init = filepath.Join(dir, name)
		}
		_, err := InitialModel(r, spec)
		if !errors.Is(err, manifest.ErrInvalid) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want ErrInvalid mentioning %q and the file", name, err, want)
		}
	}
	bad("missing.safetensors", nil, "does not exist")
	extra := append(spec.Init(1), tensor.New("fc.weight", 2, 2))
	bad("extra.safetensors", extra, `"fc.weight"`)
	wrong := spec.Init(1)
	wrong[0] = tensor.New("conv1.weight", 3, 3, 1, 32)
	bad("shape.safetensors", wrong, "shape [3 3 1 32]")
	lacking := spec.Init(1)[1:]
	bad("lacking.safetensors", lacking, `lacks "conv1.weight"`)
}
