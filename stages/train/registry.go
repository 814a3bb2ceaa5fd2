package train

import (
	"fmt"
	"sync"

	"github.com/fedpipe/fedpipe/manifest"
)

// NoParams is the parameter struct of a method that takes none.
type NoParams struct{}

var (
	buildersMu sync.RWMutex
	builders   = map[string]func(params any) Method{}
)

// Register declares a method: def goes to the manifest's catalogue
// (manifest.RegisterMethod) with its parameter struct P, whose tags give the parameters'
// names, defaults and ranges, and build makes the method from a run's parameters, decoded
// into a *P. Each method calls it once, from an init function in its own file; it panics
// on a name registered twice.
func Register[P any](def manifest.MethodDef, build func(p *P) Method) {
	def.Params = func() any { return new(P) }
	manifest.RegisterMethod(def)
	buildersMu.Lock()
	defer buildersMu.Unlock()
	builders[def.Name] = func(params any) Method { return build(params.(*P)) }
}

// NewMethod returns the implementation of the run's method with the run's parameters,
// unwrapped (NewRunMethod adds the run's BatchNorm handling).
func NewMethod(r *manifest.Run) (Method, error) {
	buildersMu.RLock()
	build, ok := builders[r.Method]
	buildersMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("method %q is not implemented", r.Method)
	}
	p, err := manifest.MethodParams(r)
	if err != nil {
		return nil, err
	}
	return build(p), nil
}
