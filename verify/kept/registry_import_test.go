package kept_test

// The method registry is filled by the methods themselves (stages/train/methods, through
// train.Register): importing them here fills it for every test of this package, internal
// ones included.
import _ "github.com/fedpipe/fedpipe/stages/train/methods"
