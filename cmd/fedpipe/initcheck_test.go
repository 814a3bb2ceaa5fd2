package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/safetensors"
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
)

// TestModelInitCheckedWithTheManifest: a model.init file that does not fit the model (a
// missing tensor, a wrong shape, a file that is not safetensors) is refused when the
// manifest is read, with an error naming the manifest and the field, exit 2, before any
// store is created; a file that fits runs.
func TestModelInitCheckedWithTheManifest(t *testing.T) {
	dir := t.TempDir()
	// The model of initManifest: an MLP on Synthetic's 60 features and 10 classes.
	good := model.ModelSpec{Arch: model.ArchMLP, InputShape: []int{60}, NumClasses: 10, Hidden: []int{8}}.Init(7)
	write := func(name string, l tensor.List, raw []byte) string {
		if l != nil {
			var buf bytes.Buffer
			if err := safetensors.Encode(&buf, l); err != nil {
				t.Fatal(err)
			}
			raw = buf.Bytes()
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if strings.HasPrefix(good[0].Name, "classifier.") {
		t.Fatalf("the MLP's first tensor is %s: the test drops a body tensor", good[0].Name)
	}
	missing, dropped := good.Clone()[1:], good[0].Name
	wrong := good.Clone()
	wrong[0].Shape = []int{wrong[0].Shape[0] + 1, wrong[0].Shape[1]}
	wrong[0].Data = make([]float32, wrong[0].Shape[0]*wrong[0].Shape[1])
	hostile := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{'}

	cases := []struct{ file, want string }{
		{write("missing.safetensors", missing, nil), "lacks \"" + dropped + "\""},
		{write("wrong.safetensors", wrong, nil), "with shape"},
		{write("hostile.safetensors", nil, hostile), "hostile.safetensors"},
	}
	for _, c := range cases {
		store := filepath.Join(dir, "store-"+filepath.Base(c.file))
		m := writeManifest(t, dir, strings.Replace(initManifest, "INIT", c.file, 1))
		code, out, errs := fedpipe(t, "run", m, "--store", store, "--quiet")
		if code != exitInvalid {
			t.Errorf("%s: exit %d, want %d\n%s%s", filepath.Base(c.file), code, exitInvalid, out, errs)
		}
		if !strings.Contains(errs, m+":") || !strings.Contains(errs, "model.init") || !strings.Contains(errs, c.want) {
			t.Errorf("%s: error does not name the manifest, model.init and %q:\n%s", filepath.Base(c.file), c.want, errs)
		}
		if _, err := os.Stat(store); err == nil {
			t.Errorf("%s: the store was created before the init file was checked", filepath.Base(c.file))
		}
	}
	m := writeManifest(t, dir, strings.Replace(initManifest, "INIT", write("good.safetensors", good, nil), 1))
	if code, out, errs := fedpipe(t, "run", m, "--store", filepath.Join(dir, "store-good"), "--quiet"); code != 0 {
		t.Errorf("a fitting init file: exit %d\n%s%s", code, out, errs)
	}
}

const initManifest = `name: init
seeds: [0]
dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 4}
partition: {scheme: natural}
model: {arch: mlp, hidden: [8], init: INIT}
train: {rounds: 1, batch_size: 16, lr: 0.05}
methods:
  - name: fedavg
`
