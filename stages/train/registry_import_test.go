package train_test

// The methods register themselves from their own package, which imports this one: importing
// it here fills the registry for every test of this package, internal ones included.
import _ "github.com/fedpipe/fedpipe/stages/train/methods"
