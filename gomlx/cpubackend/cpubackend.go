// Package cpubackend registers "fpcpu", fedpipe's CPU backend for GoMLX: GoMLX's pure-Go
// "simplego" engine, wrapped so that graphs built by GoMLX's own layers and autodiff run on
// it. The wrapper only rewrites graph construction (every op it adds is lowered to ops that
// simplego executes), so buffers, compilation and execution are simplego's:
//
//   - ConvGeneral: nil strides/dilations are filled in, and convolutions without input
//     dilation or grouping are lowered to patch extraction (im2col) + one DotGeneral, which is
//     much faster than simplego's convolution loop and works for GoMLX's convolution gradients.
//   - Reverse and Pad (missing in simplego) are composed from Slice, Concatenate and Reshape.
//
// Parallelism follows GOMAXPROCS (simplego's default is the number of CPUs). Ops are executed
// sequentially, each op parallelized internally: simplego's concurrent op scheduling can
// deadlock its worker pool.
package cpubackend

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
)

// Name is the name under which the backend is registered with GoMLX (use it in
// GOMLX_BACKEND or backends.NewWithConfig).
const Name = "fpcpu"

// CodeVersion changes whenever the lowering done here may change numeric results.
const CodeVersion = "1"

func init() {
	backends.Register(Name, New)
}

// Config holds the parsed configuration of the backend.
type Config struct {
	// Workers is the number of worker goroutines simplego may use; 0 means GOMAXPROCS.
	Workers int
}

// ParseConfig parses a configuration string: a comma-separated list of options. The only
// option is "workers=N" (N ≥ 2; the default is GOMAXPROCS, at least 2).
func ParseConfig(config string) (Config, error) {
	var c Config
	for _, part := range strings.Split(config, ",") {
		if part == "" {
			continue
		}
		key, value, _ := strings.Cut(part, "=")
		switch key {
		case "workers":
			n, err := strconv.Atoi(value)
			if err != nil || n < 2 {
				return c, fmt.Errorf("%s backend: workers needs an integer ≥ 2, got %q", Name, value)
			}
			c.Workers = n
		default:
			return c, fmt.Errorf("%s backend: unknown option %q (valid: workers=N)", Name, key)
		}
	}
	return c, nil
}

// New constructs the backend from a configuration string (see ParseConfig).
func New(config string) (backends.Backend, error) {
	c, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	workers := c.Workers
	if workers == 0 {
		// simplego's parallelism=1 was seen to deadlock: use at least 2 workers.
		workers = max(runtime.GOMAXPROCS(0), 2)
	}
	// Ops run one after the other, each spread over the workers. simplego's parallel op
	// scheduling deadlocks: op tasks occupy every worker slot while waiting for slots for their
	// own sub-tasks (DotGeneral batch splits), which never free up.
	simpleConfig := "ops_sequential"
	if workers != runtime.NumCPU() {
		// simplego's default is NumCPU; setting it explicitly prints a line, so only do it
		// when it differs.
		simpleConfig += ",parallelism=" + strconv.Itoa(workers)
	}
	inner, err := simplego.New(simpleConfig)
	if err != nil {
		return nil, err
	}
	return &Backend{Backend: inner}, nil
}

// Backend is the fpcpu backend: a simplego backend whose Builder is wrapped.
type Backend struct {
	backends.Backend
}

// Name implements backends.Backend.
func (b *Backend) Name() string { return Name }

// String implements backends.Backend.
func (b *Backend) String() string { return Name }

// Description implements backends.Backend.
func (b *Backend) Description() string {
	return "fedpipe CPU backend (GoMLX simplego with im2col convolutions and extra ops)"
}

// Capabilities implements backends.Backend: simplego's plus the ops added here.
func (b *Backend) Capabilities() backends.Capabilities {
	c := b.Backend.Capabilities().Clone()
	c.Operations[backends.OpTypeReverse] = true
	c.Operations[backends.OpTypePad] = true
	c.Operations[backends.OpTypeSelectAndScatterMax] = true
	return c
}

// Builder implements backends.Builder, returning the wrapped builder.
func (b *Backend) Builder(name string) backends.Builder {
	return &Builder{Builder: b.Backend.Builder(name)}
}
