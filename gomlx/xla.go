package gomlx

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/fedpipe/fedpipe/gomlx/xlaenv"
)

// The XLA backend (GoMLX's backends/xla over a PJRT plugin) is compiled in only with the
// build tag xla (xla_on.go), since it needs cgo; XLACompiled says which build this is.

const (
	// XLA is GoMLX's name of its XLA backend, the name before ':' in an xla configuration.
	XLA = "xla"
	// optTF32 is the backend option that lets float32 matrix products use TensorFloat-32.
	optTF32 = "tf32"
)

// xlaFinder finds PJRT plugins on this machine (a variable so tests can point it elsewhere).
var xlaFinder = &xlaenv.Finder{}

// findXLA finds the plugin an "xla:" request's options name ("cuda", "/path/x.so",
// "cuda,tf32"), and whether TensorFloat-32 was asked for.
func findXLA(opts string) (*xlaenv.Plugin, bool, error) {
	parts := strings.Split(opts, ",")
	tf32 := false
	for _, o := range parts[1:] {
		switch o {
		case "":
		case optTF32:
			tf32 = true
		default:
			return nil, false, fmt.Errorf("unknown option %q (the xla backend takes %q)", o, optTF32)
		}
	}
	p, err := xlaFinder.Find(parts[0])
	if err != nil {
		return nil, false, err
	}
	return p, tf32, nil
}

// xlaPlugins caches the plugin found for each resolved "xla:<path>" configuration, with its
// identity (which hashes the plugin's file, so it is computed once).
var xlaPlugins struct {
	mu sync.Mutex
	m  map[string]*xlaPlugin
}

type xlaPlugin struct {
	p   *xlaenv.Plugin
	tf  bool
	id  string
	err error
}

// xlaPluginOf returns the plugin of a resolved xla configuration.
func xlaPluginOf(config string) *xlaPlugin {
	xlaPlugins.mu.Lock()
	defer xlaPlugins.mu.Unlock()
	if x, ok := xlaPlugins.m[config]; ok {
		return x
	}
	_, opts, _ := strings.Cut(config, ":")
	x := &xlaPlugin{}
	x.p, x.tf, x.err = findXLA(opts)
	if x.err == nil {
		x.id, x.err = x.p.Identity()
	}
	if xlaPlugins.m == nil {
		xlaPlugins.m = map[string]*xlaPlugin{}
	}
	xlaPlugins.m[config] = x
	return x
}

// xlaID is ID's backend part for an xla configuration: the plugin's name, package
// and file hash, and ",tf32" where asked for.
func xlaID(config string) string {
	x := xlaPluginOf(config)
	if x.err != nil {
		// No usable identity: an id that can match no result computed with a real plugin.
		return "xla-unavailable"
	}
	id := "xla-" + x.id
	if x.tf {
		id += "," + optTF32
	}
	return id
}

// xlaSetup prepares this process for an xla configuration before its plugin loads: XLA's
// flags and CUDA's environment as the plugin's Environ gives them, and, unless TF32 was
// asked for, NVIDIA_TF32_OVERRIDE=0 and no Triton GEMMs, so float32 matrix products and
// convolutions are float32 (XLA's default precision lets cuBLAS, cuDNN, whose convolutions
// the XLA graphs use (model/native.go), and Triton round inputs to TensorFloat-32; cuDNN
// documents that NVIDIA_TF32_OVERRIDE=0 turns TF32 off for its default math too).
// The loader's library path cannot change inside a running process: when the NVIDIA
// libraries' folders are missing from it, loading fails and xlaHint says what to set (the
// fedpipe command re-executes itself with it set; see cmd/fedpipe).
func xlaSetup(config string) error {
	_, env, err := XLAPlugin(config)
	if err != nil {
		return err
	}
	for _, kv := range env {
		if kv[0] == xlaenv.EnvLibraryPath {
			continue
		}
		if err := os.Setenv(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// xlaEnviron is the environment (name, value) a plugin runs with in fedpipe: the plugin's
// own Environ, plus full float32 matrix products on CUDA unless tf32. Variables the user set
// are kept.
func xlaEnviron(p *xlaenv.Plugin, tf32 bool, getenv func(string) string) [][2]string {
	env := p.Environ(getenv)
	if p.CUDA() && !tf32 {
		flags := getenv(xlaenv.EnvXLAFlags)
		for _, kv := range env {
			if kv[0] == xlaenv.EnvXLAFlags {
				flags = kv[1]
			}
		}
		if !strings.Contains(flags, "--xla_gpu_enable_triton_gemm") {
			flags = strings.TrimSpace(flags + " --xla_gpu_enable_triton_gemm=false")
			env = setKV(env, xlaenv.EnvXLAFlags, flags)
		}
		if getenv("NVIDIA_TF32_OVERRIDE") == "" {
			env = append(env, [2]string{"NVIDIA_TF32_OVERRIDE", "0"})
		}
	}
	return env
}

// setKV sets k to v in a list of pairs, in place or appended.
func setKV(env [][2]string, k, v string) [][2]string {
	for i := range env {
		if env[i][0] == k {
			env[i][1] = v
			return env
		}
	}
	return append(env, [2]string{k, v})
}

// XLAProcessEnv returns the variables to set before this process starts for the backend
// configuration (as given to Resolve, or resolved): nil for non-xla backends and
// builds without XLA. cmd/fedpipe re-executes itself with them when the loader's path lacks
// the NVIDIA library folders.
func XLAProcessEnv(config string) ([][2]string, error) {
	resolved, err := Resolve(config)
	if err != nil || !strings.HasPrefix(resolved, XLA+":") {
		return nil, err
	}
	_, env, err := XLAPlugin(resolved)
	return env, err
}

// xlaHint adds to a failure to create an xla backend what was loaded and with which
// environment, and the library path to set when the NVIDIA libraries were not on it.
func xlaHint(config string, err error) error {
	if !strings.HasPrefix(config, XLA+":") {
		return err
	}
	x := xlaPluginOf(config)
	if x.err != nil {
		return errors.Join(err, x.err)
	}
	msg := fmt.Sprintf("%v (plugin %s", err, x.p.Path)
	if x.p.Package != "" {
		msg += ", from " + x.p.Package
	}
	msg += ")"
	for _, kv := range x.p.Environ(os.Getenv) {
		if kv[0] == xlaenv.EnvLibraryPath {
			msg += fmt.Sprintf("; the NVIDIA libraries it needs are not on $%s: run `export %s=%s` first "+
				"(the fedpipe command does this itself)", kv[0], kv[0], kv[1])
		}
	}
	return errors.New(msg)
}

// XLAPlugin returns the plugin a resolved xla configuration (as Resolve returns it)
// loads, and the environment it runs with (see xlaEnviron).
func XLAPlugin(config string) (*xlaenv.Plugin, [][2]string, error) {
	if !strings.HasPrefix(config, XLA+":") {
		return nil, nil, fmt.Errorf("backend %q is not an xla backend", config)
	}
	x := xlaPluginOf(config)
	if x.err != nil {
		return nil, nil, x.err
	}
	return x.p, xlaEnviron(x.p, x.tf, os.Getenv), nil
}
