package model

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"

	"github.com/fedpipe/fedpipe/model/cpubackend"
	"github.com/fedpipe/fedpipe/model/fastcpu"
)

// CPUBackend is the name of the default backend, "fpfast" (package fastcpu): the OracleBackend
// with every float32 matrix product (DotGeneral, hence also the im2col convolutions) running
// on fedpipe's blocked, vectorized SGEMM (package gemm).
const CPUBackend = fastcpu.Name

// OracleBackend is the name of the reference CPU backend, "fpcpu": GoMLX's pure-Go "simplego"
// engine wrapped by package cpubackend (missing ops added, convolution lowered to im2col +
// DotGeneral), with simplego's own matrix multiplication. Tests compare CPUBackend against it.
const OracleBackend = cpubackend.Name

// CodeVersion is bumped whenever a change in this package (graph construction, backend
// lowering, initialization) may change numeric results. It is part of BackendID, so cached
// results computed by an older version are never reused.
const CodeVersion = "fpgraph-4" // 4: convolution rows window by window (max-pooling is one ArgMax), which reorders the weight-gradient and col2im sums; 3: col2im is one ScatterSum

// LockstepCodeVersion is bumped whenever the lockstep graphs (multi.go) change in a way
// that may change results on a backend that trains in lockstep (XLA; on fpfast lockstep gives
// the bits of one client after another, and runs do not use it). It is part of the XLA
// backends' ids.
const LockstepCodeVersion = "lockstep-3" // 3: col2im a Gather and a ReduceSum, no ScatterSum (multiCol2im with gather); 2: im2col, col2im and pooling constants of one client's batch, not all clients'

// XLAGraphVersion is bumped whenever the graphs built for the XLA backends alone (not fpfast's
// or fpcpu's) change in a way that may change results on them, single-client graphs included.
// Like LockstepCodeVersion it is part of the XLA backends' ids only, so fpfast's and fpcpu's
// ids and cached results are unaffected.
const XLAGraphVersion = "xlagraph-1" // 1: convolutions and max-pooling as XLA's own convolution and reduce-window ops and their gradients (native.go), not im2col

// usesXLA reports whether a backend configuration (as NewModel takes it) is one of the XLA
// backends, whose convolution layers take the native form (native.go) and whose lockstep
// graphs, in the im2col form, take col2im without a scatter (multiCol2im with gather).
func usesXLA(config string) bool {
	return config == xlaName || strings.HasPrefix(config, xlaName+":")
}

// gomlxVersionFallback is used by BackendID when the binary carries no module build info
// (for instance in some test binaries).
const gomlxVersionFallback = "v0.26.0"

// envBackend is GoMLX's environment variable naming the backend configuration.
const envBackend = backends.ConfigEnvVar

// ResolveBackend picks the backend configuration to use: flag if non-empty, else
// $GOMLX_BACKEND, else CPUBackend. It never downloads anything.
//
// Accepted values are "fpfast" and "fpcpu" (optionally "<name>:<options>", see packages
// fastcpu and cpubackend) and "xla:<plugin>[,tf32]", where <plugin> is a PJRT plugin name
// ("cuda", "cpu", ...) or an absolute path to one, found as package xlaenv describes. An xla
// request resolves to "xla:<absolute plugin path>[,tf32]". It fails, naming every place
// searched, when no plugin is found, and when this binary was built without the XLA backend
// (it needs cgo and the build tag xla: make build-xla). ",tf32" lets NVIDIA GPUs multiply
// float32 matrices in TensorFloat-32; without it they use full float32 (see xlaSetup).
func ResolveBackend(flag string) (string, error) {
	config, source := flag, "flag"
	if config == "" {
		config, source = os.Getenv(envBackend), "$"+envBackend
	}
	if config == "" {
		return CPUBackend, nil
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
			"when it schedules ops in parallel; use %q, the same engine with that fixed", config, source, CPUBackend)
	case xlaName:
		p, tf32, err := findXLA(opts)
		if err != nil {
			return "", fmt.Errorf("backend %q (from %s): %w; or use %q", config, source, err, CPUBackend)
		}
		if !XLACompiled {
			return "", fmt.Errorf("backend %q (from %s): found PJRT plugin %s, but this fedpipe was built without the XLA "+
				"backend (pure Go); build it with `make build-xla` (go build -tags xla, needs cgo), or use %q",
				config, source, p.Path, CPUBackend)
		}
		resolved := xlaName + ":" + p.Path
		if tf32 {
			resolved += "," + optTF32
		}
		return resolved, nil
	default:
		return "", fmt.Errorf("unknown backend %q (from %s): use %q (default), %q (the reference) "+
			"or \"xla:<plugin name or absolute .so path>\"", config, source, CPUBackend, OracleBackend)
	}
}

// BackendID returns a stable identity string for results computed with the backend
// configuration name (as returned by ResolveBackend): it names the GoMLX version, the
// backend, this package's CodeVersion and the dtype, and is meant to go into cache keys.
// Options that do not change numeric results (such as the number of worker threads) are not
// part of it.
func BackendID(name string) string {
	backend, _, _ := strings.Cut(name, ":")
	if backend == "" {
		backend = CPUBackend
	}
	b := backend
	switch backend {
	case cpubackend.Name:
		b += "@" + cpubackend.CodeVersion
	case fastcpu.Name:
		b += "@" + fastcpu.Version()
	case xlaName:
		// XLA trains in lockstep (stages/train), with its own graph form (native.go).
		b = xlaID(name) + "+" + LockstepCodeVersion + "+" + XLAGraphVersion
	}
	return fmt.Sprintf("gomlx@%s/%s/%s/float32", gomlxVersion(), b, CodeVersion)
}

// gomlxVersion is the version of the GoMLX module linked into the binary.
var gomlxVersion = sync.OnceValue(func() string {
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

// getBackend returns the shared backend for a configuration (already resolved).
func getBackend(config string) (backends.Backend, error) {
	config, err := ResolveBackend(config)
	if err != nil {
		return nil, err
	}
	backendCache.mu.Lock()
	defer backendCache.mu.Unlock()
	if b, ok := backendCache.m[config]; ok {
		return b, nil
	}
	if strings.HasPrefix(config, xlaName+":") {
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

// SingleThreaded returns the configuration of backend (as ResolveBackend returns it) with
// each op on one goroutine, for models that run side by side, one per core; false for a
// backend that cannot (only fpfast can). Its results are backend's, bit for bit.
func SingleThreaded(backend string) (string, bool) {
	name, opts, _ := strings.Cut(backend, ":")
	if name == "" {
		name = CPUBackend
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

// CheckBackendName reports whether config names a backend this package knows (its name
// before any ':'), without looking for plugins or parsing options: what a machine that
// only writes a job script for other machines can check (`fedpipe slurm --backend`).
func CheckBackendName(config string) error {
	switch name, _, _ := strings.Cut(config, ":"); name {
	case fastcpu.Name, cpubackend.Name, xlaName:
		return nil
	default:
		return fmt.Errorf("unknown backend %q: use %q (default), %q (the reference) or \"xla:<plugin name or absolute .so path>\"",
			config, CPUBackend, OracleBackend)
	}
}

// backendFamily is a backend id's backend without versions ("fpfast", "fpcpu",
// "xla-cuda"), as pipeline.BackendFamily reads it.
func backendFamily(id string) string {
	parts := strings.Split(id, "/")
	if len(parts) < 2 {
		return ""
	}
	fam, _, _ := strings.Cut(parts[1], "@")
	fam, _, _ = strings.Cut(fam, "+")
	return fam
}

// CurrentBackendID is the id this code gives the backend that made a result recorded with
// backend id recorded: the same backend (fpfast, fpcpu, or the same XLA plugin, whose
// identity and TF32 setting are kept) with this binary's versions of the code that computes
// on it (GoMLX's version, CodeVersion, the backends' own versions, LockstepCodeVersion).
// A kept result is current when its key equals the key computed with this id: it is stale
// when that code changed, never only because this machine runs another backend. An id of
// no known form is returned as it is.
func CurrentBackendID(recorded string) string {
	parts := strings.Split(recorded, "/")
	if len(parts) != 4 {
		return recorded
	}
	switch fam := backendFamily(recorded); {
	case fam == fastcpu.Name:
		return BackendID(CPUBackend)
	case fam == cpubackend.Name:
		return BackendID(OracleBackend)
	case strings.HasPrefix(fam, xlaName+"-"):
		plugin, _, _ := strings.Cut(parts[1], "+") // "xla-cuda@<plugin identity>[,tf32]"
		return fmt.Sprintf("gomlx@%s/%s+%s/%s/%s", gomlxVersion(), plugin, LockstepCodeVersion, CodeVersion, parts[3])
	default:
		return recorded
	}
}

// BackendHere says which backend configuration of this machine computes the results of
// backend id (as BackendID gives it) bit for bit: the configuration whose id is id. When
// none does, it returns "" and why, naming the backend ("made on xla-cuda, which this
// machine lacks: …").
func BackendHere(id string) (config, why string) {
	fam := backendFamily(id)
	var tries []string
	switch {
	case fam == fastcpu.Name:
		tries = []string{CPUBackend}
	case fam == cpubackend.Name:
		tries = []string{OracleBackend}
	case strings.HasPrefix(fam, xlaName+"-"):
		if !XLACompiled {
			return "", fmt.Sprintf("made on %s, which this machine lacks (this fedpipe is built without the XLA backend)", fam)
		}
		plugin := strings.TrimPrefix(fam, xlaName+"-")
		tries = []string{xlaName + ":" + plugin, xlaName + ":" + plugin + "," + optTF32}
	default:
		return "", fmt.Sprintf("made on %q, a backend this fedpipe does not know", id)
	}
	var here []string
	for _, t := range tries {
		c, err := ResolveBackend(t)
		if err != nil {
			continue
		}
		if BackendID(c) == id {
			return c, ""
		}
		here = append(here, BackendID(c))
	}
	if len(here) == 0 {
		return "", fmt.Sprintf("made on %s, which this machine lacks", fam)
	}
	return "", fmt.Sprintf("made on %s, which this machine lacks (its %s is %s)", id, fam, strings.Join(here, " or "))
}
