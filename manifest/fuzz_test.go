package manifest

import (
	"errors"
	"testing"
)

// FuzzParseManifest: any input either parses or fails with an InputError; never a panic.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(validManifest))
	f.Add([]byte("name: t\ndataset: {name: fmnist}\nmethods: [{name: fedavg}]\ngrid: {train.lr: [0.1, 0.2]}\n"))
	f.Add([]byte("name: [\n"))
	f.Add([]byte("a: &x {b: *x}\n"))
	f.Add([]byte("name: t\nmethods:\n  - {name: local, train: {lr: 1e-3}, grid: {params.x: [1]}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest("f.yaml", b)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("non-input error %T: %v", err, err)
			}
			return
		}
		if _, err := m.Expand(); err != nil {
			t.Fatalf("parsed manifest fails to expand: %v", err)
		}
	})
}
