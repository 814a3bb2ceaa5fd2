package gomlx

import (
	"fmt"
	"io"
	"strings"

	"github.com/fedpipe/fedpipe/gomlx/gemm"
	"github.com/fedpipe/fedpipe/gomlx/xlaenv"
)

// Description is what `fedpipe backend` says of a resolved backend configuration: its id
// and, for xla, the PJRT plugin it loads from where, and the environment it runs with.
type Description struct {
	// Backend is the configuration (as Resolve returns it), ID its id (as package model
	// gives it).
	Backend, ID string
	// Plugin and Env are an xla configuration's plugin and environment (XLAPlugin); nil
	// for the others.
	Plugin *xlaenv.Plugin
	Env    [][2]string
}

// Describe describes backend (resolved), whose id is id; it fails only for an xla
// configuration whose plugin cannot be found again.
func Describe(backend, id string) (*Description, error) {
	d := &Description{Backend: backend, ID: id}
	if strings.HasPrefix(backend, XLA+":") {
		var err error
		if d.Plugin, d.Env, err = XLAPlugin(backend); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Fields are the description as one JSON object's fields: backend, id, xla_compiled and,
// for xla, plugin (name, path, package, lib_dirs, cuda_dir, searched, env).
func (d *Description) Fields() map[string]any {
	out := map[string]any{"backend": d.Backend, "id": d.ID, "xla_compiled": XLACompiled}
	if p := d.Plugin; p != nil {
		env := map[string]string{}
		for _, kv := range d.Env {
			env[kv[0]] = kv[1]
		}
		out["plugin"] = map[string]any{"name": p.Name, "path": p.Path, "package": p.Package, "lib_dirs": p.LibDirs,
			"cuda_dir": p.CUDADir, "searched": p.Searched, "env": env}
	}
	return out
}

// WriteText prints the description, one "name:  value" line each: backend and id, then
// whether this binary has XLA and fpfast's GEMM kernels or, for xla, the plugin, where it
// was searched for, the NVIDIA library and CUDA folders and the environment.
func (d *Description) WriteText(w io.Writer) {
	fmt.Fprintf(w, "backend:  %s\nid:       %s\n", d.Backend, d.ID)
	p := d.Plugin
	if p == nil {
		xla := "no (make build-xla builds it)"
		if XLACompiled {
			xla = "yes"
		}
		fmt.Fprintf(w, "xla:      %s\n", xla)
		fmt.Fprintf(w, "gemm:     %s kernels in fpfast (results as %s; $FEDPIPE_KERNEL=avx2 forces AVX2)\n", gemm.KernelISA(), gemm.Kernel())
		return
	}
	fmt.Fprintf(w, "plugin:   %s (%s)\n", p.Path, p.Name)
	if p.Package != "" {
		fmt.Fprintf(w, "package:  %s\n", p.Package)
	}
	fmt.Fprintf(w, "searched: %s\n", strings.Join(p.Searched, "\n          "))
	if p.CUDA() {
		cuda := p.CUDADir
		if cuda == "" {
			cuda = "none found (no nvvm/libdevice in $CUDA_HOME, /usr/local/cuda or site-packages/nvidia/*): XLA falls back on its own search"
		}
		fmt.Fprintf(w, "libs:     %s\ncuda:     %s\n", strings.Join(p.LibDirs, "\n          "), cuda)
	}
	for _, kv := range d.Env {
		fmt.Fprintf(w, "env:      %s=%s\n", kv[0], kv[1])
	}
}
