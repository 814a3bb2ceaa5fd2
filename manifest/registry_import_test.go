package manifest_test

// The method and dataset registries are filled by the methods and the loaders themselves
// (stages/train/methods, through train.Register; stages/data): importing them here fills
// them for every test of this package, internal ones included.
import (
	_ "github.com/fedpipe/fedpipe/stages/data"
	_ "github.com/fedpipe/fedpipe/stages/train/methods"
)
