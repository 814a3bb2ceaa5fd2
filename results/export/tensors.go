package export

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/safetensors"
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
)

// Tensors writes every cached tensor output of g's stages (global, model/NNNNN,
// personal/NNNNN, mask/NNNNN, aux/…) as <folder>/<output>.safetensors in the stage's
// folder (StageFolders; the output's "/" as "-"), masks as float32 0/1 tensors of the
// masked tensor's name and shape, for PyTorch (safetensors.torch.load_file) and NumPy.
// It returns how many files it wrote (`fedpipe export --models`).
func Tensors(g *pipeline.Graph, store *artifacts.Store, out string) (int, error) {
	files := 0
	folders := StageFolders(g)
	for _, n := range g.Nodes {
		a, ok, err := store.GetAction(artifacts.Digest(n.Key))
		if err != nil || !ok {
			if err != nil {
				return files, err
			}
			continue
		}
		dir := filepath.Join(out, folders[n.Name])
		for name, d := range a.Outputs {
			if !results.TensorOutput(name) {
				continue
			}
			b, err := store.Get(d)
			if err != nil {
				return files, err
			}
			bundle, err := tensor.DecodeBundle(b)
			if err != nil {
				return files, fmt.Errorf("%s output %s: %w", n.Name, name, err)
			}
			l := append(tensor.List{}, bundle.Tensors...)
			for _, m := range bundle.Masks {
				l = append(l, m.Tensor())
			}
			var buf bytes.Buffer
			if err := safetensors.Encode(&buf, l); err != nil {
				return files, fmt.Errorf("%s output %s: %w", n.Name, name, err)
			}
			if err := WriteFile(filepath.Join(dir, strings.ReplaceAll(name, "/", "-")+".safetensors"), buf.Bytes()); err != nil {
				return files, err
			}
			files++
		}
	}
	return files, nil
}
