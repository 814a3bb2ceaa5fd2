package gomlx

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"

	"github.com/fedpipe/fedpipe/gomlx/cpubackend"
	"github.com/fedpipe/fedpipe/gomlx/fastcpu"
)

// CPU is the name of the default backend, "fpfast" (package fastcpu): Oracle with every
// float32 matrix product (DotGeneral, hence also the im2col convolutions) running on
// fedpipe's blocked, vectorized SGEMM (package gemm).
const CPU = fastcpu.Name

// Oracle is the name of the reference CPU backend, "fpcpu": GoMLX's pure-Go "simplego"
// engine wrapped by package cpubackend (missing ops added, convolution lowered to im2col +
// DotGeneral), with simplego's own matrix multiplication. Tests compare CPU against it.
const Oracle = cpubackend.Name

// GraphVersions are the versions of the code that builds the graphs a backend runs (package
// model's), which a backend id carries beside the backend's own: a change of any of them
// that may change numeric results changes the ids it is part of, so cached results computed
// by older code are never reused.
type GraphVersions struct {
	// Graph is part of every backend's id.
	Graph string
	// Lockstep and XLAGraph are part of the XLA backends' ids only (XLA trains clients in
	// lockstep, with graphs of its own form), so fpfast's and fpcpu's ids ignore them.
	Lockstep, XLAGraph string
}

// UsesXLA reports whether a backend configuration (resolved or not) is one of the XLA
// backends.
func UsesXLA(config string) bool {
	return config == XLA || strings.HasPrefix(config, XLA+":")
}

// gomlxVersionFallback is used by ID when the binary carries no module build info (for
// instance in some test binaries).
const gomlxVersionFallback = "v0.26.0"

// envBackend is GoMLX's environment variable naming the backend configuration.
const envBackend = backends.ConfigEnvVar

// Resolve picks the backend configuration to use: flag if non-empty, else $GOMLX_BACKEND,
// else CPU. It never downloads anything.
//
// Accepted values are "fpfast" and "fpcpu" (optionally "<name>:<options>", see packages
// fastcpu and cpubackend) and "xla:<plugin>[,tf32]", where <plugin> is a PJRT plugin name
// ("cuda", "cpu", ...) or an absolute path to one, found as package xlaenv describes. An xla
// request resolves to "xla:<absolute plugin path>[,tf32]". It fails, naming every place
// searched, when no plugin is found, and when this binary was built without the XLA backend
// (it needs cgo and the build tag xla: make build-xla). ",tf32" lets NVIDIA GPUs multiply
// float32 matrices in TensorFloat-32; without it they use full float32 (see xlaSetup).
func Resolve(flag string) (string, error) {
	config, source := flag, "flag"
	if config == "" {
		config, source = os.Getenv(envBackend), "$"+envBackend
	}
	if config == "" {
		return CPU, nil
	}
	name, opts, _ := strings.Cut(config, ":")
	switch name {
	case fastcpu.Name:
		if _, err := fastcpu.ParseConfig(opts); err != nil {
			return "", fmt.Errorf("backend %q (from %s): %w", config, source, err)
		}
		return config, nil
	case cpubackend.Name:
		if _, err := cpubackend.ParseConfig(opts); err != nil {
			return "", fmt.Errorf("backend %q (from %s): %w", config, source, err)
		}
		return config, nil
	case "go":
		return "", fmt.Errorf("backend %q (from %s): GoMLX's stock pure-Go backend can deadlock its worker pool "+
			"when it schedules ops in parallel; use %q, the same engine with that fixed", config, source, CPU)
	case XLA:
		p, tf32, err := findXLA(opts)
		if err != nil {
			return "", fmt.Errorf("backend %q (from %s): %w; or use %q", config, source, err, CPU)
		}
		if !XLACompiled {
			return "", fmt.Errorf("backend %q (from %s): found PJRT plugin %s, but this fedpipe was built without the XLA "+
				"backend (pure Go); build it with `make build-xla` (go build -tags xla, needs cgo), or use %q",
				config, source, p.Path, CPU)
		}
		resolved := XLA + ":" + p.Path
		if tf32 {
			resolved += "," + optTF32
		}
		return resolved, nil
	default:
		return "", fmt.Errorf("unknown backend %q (from %s): use %q (default), %q (the reference) "+
			"or \"xla:<plugin name or absolute .so path>\"", config, source, CPU, Oracle)
	}
}

// ID returns a stable identity string for results computed with the backend configuration
// name (as returned by Resolve) by graphs of versions v: it names the GoMLX version, the
// backend, v and the dtype, and is meant to go into cache keys. Options that do not change
// numeric results (such as the number of worker threads) are not part of it.
func ID(name string, v GraphVersions) string {
	backend, _, _ := strings.Cut(name, ":")
	if backend == "" {
		backend = CPU
	}
	b := backend
	switch backend {
	case cpubackend.Name:
		b += "@" + cpubackend.CodeVersion
	case fastcpu.Name:
		b += "@" + fastcpu.Version()
	case XLA:
		// XLA trains in lockstep, with its own graph form (model/native.go).
		b = xlaID(name) + "+" + v.Lockstep + "+" + v.XLAGraph
	}
	return fmt.Sprintf("gomlx@%s/%s/%s/float32", GoMLXVersion(), b, v.Graph)
}

// GoMLXVersion is the version of the GoMLX module linked into the binary, the first part of
// every backend id.
var GoMLXVersion = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/gomlx/gomlx" {
				if dep.Replace != nil && dep.Replace.Version != "" {
					return dep.Replace.Version
				}
				if dep.Version != "" && dep.Version != "(devel)" {
					return dep.Version
				}
			}
		}
	}
	return gomlxVersionFallback
})

// backendCache holds one backend instance per configuration string: backends own worker
// pools and buffer pools and are meant to be long-lived and shared.
var backendCache struct {
	mu sync.Mutex
	m  map[string]backends.Backend
}

// Get returns the shared backend for a configuration (resolved first, as Resolve does),
// creating it on first use: one instance per configuration, for the life of the process.
func Get(config string) (backends.Backend, error) {
	config, err := Resolve(config)
	if err != nil {
		return nil, err
	}
	backendCache.mu.Lock()
	defer backendCache.mu.Unlock()
	if b, ok := backendCache.m[config]; ok {
		return b, nil
	}
	if strings.HasPrefix(config, XLA+":") {
		if err := xlaSetup(config); err != nil {
			return nil, err
		}
	}
	b, err := newBackend(config)
	if err != nil {
		return nil, xlaHint(config, err)
	}
	if backendCache.m == nil {
		backendCache.m = map[string]backends.Backend{}
	}
	backendCache.m[config] = b
	return b, nil
}

// newBackend constructs a backend, converting GoMLX's panics into errors.
func newBackend(config string) (b backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("creating GoMLX backend %q: %v", config, r)
		}
	}()
	return backends.NewWithConfig(config)
}

// SingleThreaded returns the configuration of backend (as Resolve returns it) with each op
// on one goroutine, for models that run side by side, one per core; false for a backend
// that cannot (only fpfast can). Its results are backend's, bit for bit.
func SingleThreaded(backend string) (string, bool) {
	name, opts, _ := strings.Cut(backend, ":")
	if name == "" {
		name = CPU
	}
	if name != fastcpu.Name {
		return "", false
	}
	var keep []string
	for _, o := range strings.Split(opts, ",") {
		if o != "" && !strings.HasPrefix(o, "threads=") {
			keep = append(keep, o)
		}
	}
	return name + ":" + strings.Join(append(keep, "threads=1"), ","), true
}

// CheckName reports whether config names a backend this package knows (its name before any
// ':'), without looking for plugins or parsing options: what a machine that only writes a
// job script for other machines can check (`fedpipe slurm --backend`).
func CheckName(config string) error {
	switch name, _, _ := strings.Cut(config, ":"); name {
	case fastcpu.Name, cpubackend.Name, XLA:
		return nil
	default:
		return fmt.Errorf("unknown backend %q: use %q (default), %q (the reference) or \"xla:<plugin name or absolute .so path>\"",
			config, CPU, Oracle)
	}
}

// family is a backend id's backend without versions ("fpfast", "fpcpu", "xla-cuda"), as
// kept.BackendFamily reads it.
func family(id string) string {
	parts := strings.Split(id, "/")
	if len(parts) < 2 {
		return ""
	}
	fam, _, _ := strings.Cut(parts[1], "@")
	fam, _, _ = strings.Cut(fam, "+")
	return fam
}

// CurrentID is the id that graphs of versions v give the backend that made a result recorded
// with backend id recorded: the same backend (fpfast, fpcpu, or the same XLA plugin, whose
// identity and TF32 setting are kept) with this binary's versions of the code that computes
// on it (GoMLX's version, v, the backends' own versions). A kept result is current when its
// key equals the key computed with this id: it is stale when that code changed, never only
// because this machine runs another backend. An id of no known form is returned as it is.
func CurrentID(recorded string, v GraphVersions) string {
	parts := strings.Split(recorded, "/")
	if len(parts) != 4 {
		return recorded
	}
	switch fam := family(recorded); {
	case fam == fastcpu.Name:
		return ID(CPU, v)
	case fam == cpubackend.Name:
		return ID(Oracle, v)
	case strings.HasPrefix(fam, XLA+"-"):
		plugin, _, _ := strings.Cut(parts[1], "+") // "xla-cuda@<plugin identity>[,tf32]"
		return fmt.Sprintf("gomlx@%s/%s+%s+%s/%s/%s", GoMLXVersion(), plugin, v.Lockstep, v.XLAGraph, v.Graph, parts[3])
	default:
		return recorded
	}
}

// Here says which backend configuration of this machine computes the results of backend id
// (as ID gives it with versions v) bit for bit: the configuration whose id is id. When none
// does, it returns "" and why, naming the backend ("made on xla-cuda, which this machine
// lacks: …").
func Here(id string, v GraphVersions) (config, why string) {
	fam := family(id)
	var tries []string
	switch {
	case fam == fastcpu.Name:
		tries = []string{CPU}
	case fam == cpubackend.Name:
		tries = []string{Oracle}
	case strings.HasPrefix(fam, XLA+"-"):
		if !XLACompiled {
			return "", fmt.Sprintf("made on %s, which this machine lacks (this fedpipe is built without the XLA backend)", fam)
		}
		plugin := strings.TrimPrefix(fam, XLA+"-")
		tries = []string{XLA + ":" + plugin, XLA + ":" + plugin + "," + optTF32}
	default:
		return "", fmt.Sprintf("made on %q, a backend this fedpipe does not know", id)
	}
	var here []string
	for _, t := range tries {
		c, err := Resolve(t)
		if err != nil {
			continue
		}
		if ID(c, v) == id {
			return c, ""
		}
		here = append(here, ID(c, v))
	}
	if len(here) == 0 {
		return "", fmt.Sprintf("made on %s, which this machine lacks", fam)
	}
	return "", fmt.Sprintf("made on %s, which this machine lacks (its %s is %s)", id, fam, strings.Join(here, " or "))
}
