// Package fastcpu registers "fpfast", fedpipe's fast CPU backend for GoMLX. It is the "fpcpu"
// backend (package cpubackend: GoMLX's pure-Go simplego engine with im2col convolutions and
// the ops simplego lacks) with simplego's matrix multiplication replaced: every float32
// DotGeneral executed by an fpfast backend runs on package gemm's cache-blocked, vectorized
// SGEMM, spread over the backend's workers. Graph construction, the other ops, buffers and
// scheduling are unchanged, so "fpcpu" remains available as the numeric oracle.
//
// simplego has no public hook for replacing an op's implementation: the DotGeneral entry of
// its executor table is swapped at init (see hook.go) for a function that serves fpfast
// backends and passes every other backend's calls, and every non-float32 call, to simplego's
// own implementation.
//
// Results are deterministic and do not depend on the number of workers (see package gemm).
package fastcpu

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/fedpipe/fedpipe/gomlx/cpubackend"
	"github.com/fedpipe/fedpipe/gomlx/gemm"
)

// Name is the name under which the backend is registered with GoMLX.
const Name = "fpfast"

// CodeVersion changes whenever the implementation here may change numeric results.
const CodeVersion = "1"

// Version identifies the numeric path of the backend: this package's CodeVersion, the GEMM
// micro-kernel in use (which differs between CPUs) and the cpubackend lowering it builds on.
func Version() string {
	return CodeVersion + "+gemm-" + gemm.Kernel() + "+" + cpubackend.Name + "@" + cpubackend.CodeVersion
}

func init() {
	backends.Register(Name, New)
}

// Config is the parsed configuration of an fpfast backend.
type Config struct {
	cpubackend.Config
	// Threads bounds the goroutines each of fpfast's own ops (matrix products, elementwise
	// ops, copies, reductions, scatters) runs on; 0: Workers, else GOMAXPROCS. With
	// threads=1 several models can run side by side, one per core, each op on the goroutine
	// that runs the graph. Results never depend on it.
	Threads int
}

// ParseConfig parses a configuration string: comma-separated options, "threads=N" (N ≥ 1;
// see Config) and those of cpubackend.ParseConfig ("workers=N").
func ParseConfig(config string) (Config, error) {
	var c Config
	var rest []string
	for _, part := range strings.Split(config, ",") {
		key, value, _ := strings.Cut(part, "=")
		if key != "threads" {
			rest = append(rest, part)
			continue
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return c, fmt.Errorf("%s: threads needs an integer ≥ 1, got %q", Name, value)
		}
		c.Threads = n
	}
	inner, err := cpubackend.ParseConfig(strings.Join(rest, ","))
	if err != nil {
		return c, fmt.Errorf("%s: %w", Name, err)
	}
	c.Config = inner
	return c, nil
}

// registry maps the simplego engines owned by live fpfast backends to their backend.
var registry sync.Map // *simplego.Backend → *Backend

// lookup returns the fpfast backend owning engine, or nil.
func lookup(engine *simplego.Backend) *Backend {
	if b, ok := registry.Load(engine); ok {
		return b.(*Backend)
	}
	return nil
}

// New constructs the backend from a configuration string (see ParseConfig).
func New(config string) (backends.Backend, error) {
	c, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	if !hookInstalled {
		return nil, fmt.Errorf("%s: %s", Name, hookError)
	}
	inner, err := cpubackend.New(cpuConfig(c.Config))
	if err != nil {
		return nil, err
	}
	cb, ok := inner.(*cpubackend.Backend)
	if !ok {
		return nil, fmt.Errorf("%s: unexpected inner backend %T", Name, inner)
	}
	engine, ok := cb.Backend.(*simplego.Backend)
	if !ok {
		return nil, fmt.Errorf("%s: unexpected engine %T", Name, cb.Backend)
	}
	threads := c.Threads
	if threads == 0 {
		threads = c.Workers
	}
	b := &Backend{Backend: cb, engine: engine, threads: threads}
	registry.Store(engine, b)
	return b, nil
}

// Backend is the fpfast backend: an fpcpu backend whose float32 DotGeneral runs on package
// gemm.
type Backend struct {
	*cpubackend.Backend
	engine  *simplego.Backend
	threads int // goroutines per op; 0: GOMAXPROCS at each call.
}

// threadsOf returns the goroutines an op of engine may use (0: GOMAXPROCS).
func threadsOf(engine *simplego.Backend) int {
	if b := lookup(engine); b != nil {
		return b.threads
	}
	return 0
}

// cpuConfig is the cpubackend configuration string of c.
func cpuConfig(c cpubackend.Config) string {
	if c.Workers == 0 {
		return ""
	}
	return "workers=" + strconv.Itoa(c.Workers)
}

// Name implements backends.Backend.
func (b *Backend) Name() string { return Name }

// String implements backends.Backend.
func (b *Backend) String() string { return Name }

// Description implements backends.Backend.
func (b *Backend) Description() string {
	// Display only (no key reads it): the ISA of the kernels may differ between machines
	// computing the same bits, gemm.Kernel() may not.
	return "fedpipe fast CPU backend (fpcpu with a blocked " + gemm.Kernel() + " SGEMM for DotGeneral, " + gemm.KernelISA() + " kernels)"
}

// Finalize implements backends.Backend.
func (b *Backend) Finalize() {
	registry.Delete(b.engine)
	b.Backend.Finalize()
}
