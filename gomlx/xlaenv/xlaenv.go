// Package xlaenv finds a PJRT plugin for GoMLX's XLA backend on the local machine, and the
// environment the plugin needs to load and to compute reproducibly, without downloading
// anything. It is pure Go, so CPU-only builds and tests use it too: they report what an
// "xla:..." backend request would have found.
//
// A request names a plugin ("cuda", "cpu", any PJRT plugin name) or an absolute path to its
// shared library. A name is searched, in order:
//
//  1. in each folder of $PJRT_PLUGIN_LIBRARY_PATH, as pjrt_c_api_<name>_plugin.so;
//  2. for CUDA, in Python's site-packages folders, as JAX's plugin package lays it out:
//     jax_plugins/xla_cuda<major>/xla_cuda_plugin.so (the highest CUDA major first), with
//     the NVIDIA libraries of the nvidia-* wheels beside it in site-packages/nvidia;
//  3. in GoMLX's own install folders, ~/.local/lib/go-xla and /usr/local/lib/go-xla.
//
// Site-packages folders are those the Python interpreter reports ($FEDPIPE_PYTHON, else
// python3 on $PATH), then $VIRTUAL_ENV's, then the usual system and user folders.
package xlaenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/osfile"
)

// Environment variables read or written.
const (
	// EnvPluginPath lists folders searched for pjrt_c_api_<name>_plugin.so.
	EnvPluginPath = "PJRT_PLUGIN_LIBRARY_PATH"
	// EnvPython names the Python interpreter asked for its site-packages folders.
	EnvPython = "FEDPIPE_PYTHON"
	// EnvXLAFlags carries XLA's own flags.
	EnvXLAFlags = "XLA_FLAGS"
	// EnvLibraryPath is the dynamic loader's search path, read once when a process starts.
	EnvLibraryPath = "LD_LIBRARY_PATH"
)

// Plugin is a PJRT plugin found on this machine and what it needs around it.
type Plugin struct {
	// Name is the plugin's name ("cuda", "cpu", ...); for a path request, the name its file
	// carries (pjrt_c_api_<name>_plugin.so, or "cuda" for JAX's xla_cuda_plugin.so).
	Name string
	// Path is the plugin's absolute path.
	Path string
	// Package is the Python distribution the plugin came from with its version (for
	// instance "jax-cuda13-pjrt 0.11.2"), when its metadata lies beside it; else "".
	Package string
	// LibDirs are the folders of NVIDIA's pip-installed libraries the plugin links against
	// (site-packages/nvidia/*/lib), to be on the loader's search path when it loads.
	LibDirs []string
	// CUDADir is the CUDA installation XLA compiles kernels with (it holds
	// nvvm/libdevice), passed as --xla_gpu_cuda_data_dir; "" when none was found.
	CUDADir string
	// Searched lists every place looked at, in order, up to and including the one found.
	Searched []string
}

// CUDA reports whether the plugin drives NVIDIA GPUs.
func (p *Plugin) CUDA() bool { return strings.HasPrefix(p.Name, "cuda") }

// NotFoundError says that no plugin answered a request, and where it was looked for.
type NotFoundError struct {
	Request  string
	Searched []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("PJRT plugin %q not found (searched: %s); plugins are never downloaded: install one "+
		"(for CUDA, JAX's: pip install jax[cuda13]) and point $%s at its folder, or name its .so by absolute path "+
		"(xla:/path/to/plugin.so)", e.Request, strings.Join(e.Searched, ", "), EnvPluginPath)
}

// Finder searches for plugins. Its zero value searches this machine; tests set the fields.
type Finder struct {
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// SitePackages returns the Python site-packages folders to search (pythonSitePackages
	// when nil).
	SitePackages func() []string
	// Home is the user's home folder (os.UserHomeDir when "").
	Home string
	// SystemCUDA lists CUDA installations to try for CUDADir before the pip-installed ones
	// ($CUDA_HOME, $CUDA_PATH and /usr/local/cuda when nil).
	SystemCUDA []string
}

func (f *Finder) getenv(k string) string {
	if f.Getenv != nil {
		return f.Getenv(k)
	}
	return os.Getenv(k)
}

func (f *Finder) home() string {
	if f.Home != "" {
		return f.Home
	}
	h, _ := os.UserHomeDir()
	return h
}

// Find looks up the plugin a request names: "" means "cpu"; an absolute path is that file.
func (f *Finder) Find(request string) (*Plugin, error) {
	if request == "" {
		request = "cpu"
	}
	if filepath.IsAbs(request) {
		p := &Plugin{Path: filepath.Clean(request), Name: nameOfFile(request), Searched: []string{request}}
		if !isFile(p.Path) {
			return nil, &NotFoundError{Request: request, Searched: p.Searched}
		}
		f.complete(p)
		return p, nil
	}
	if strings.ContainsAny(request, `/\`) || strings.HasSuffix(request, ".so") {
		return nil, fmt.Errorf("PJRT plugin %q: name a plugin (cuda, cpu, ...) or give the .so's absolute path", request)
	}
	var searched []string
	file := "pjrt_c_api_" + request + "_plugin.so"
	try := func(path string) *Plugin {
		searched = append(searched, path)
		if isFile(path) {
			return &Plugin{Name: request, Path: path}
		}
		return nil
	}
	dirs := filepath.SplitList(f.getenv(EnvPluginPath))
	if len(dirs) == 0 {
		searched = append(searched, "$"+EnvPluginPath+" (unset)")
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if p := try(filepath.Join(absOr(d), file)); p != nil {
			return f.found(p, searched)
		}
	}
	if strings.HasPrefix(request, "cuda") {
		sites := f.sitePackages()
		if len(sites) == 0 {
			searched = append(searched, "Python site-packages (none found)")
		}
		for _, sp := range sites {
			pattern := filepath.Join(sp, "jax_plugins", "xla_"+request+"*", "xla_cuda_plugin.so")
			matches, _ := filepath.Glob(pattern)
			if len(matches) == 0 {
				searched = append(searched, pattern)
				continue
			}
			// xla_cuda13 before xla_cuda12: the newest CUDA major the machine has.
			sort.Sort(sort.Reverse(sort.StringSlice(matches)))
			for _, m := range matches {
				if p := try(m); p != nil {
					p.Name = "cuda"
					return f.found(p, searched)
				}
			}
		}
	}
	if h := f.home(); h != "" {
		if p := try(filepath.Join(h, ".local", "lib", "go-xla", file)); p != nil {
			return f.found(p, searched)
		}
	}
	if p := try(filepath.Join("/usr/local/lib/go-xla", file)); p != nil {
		return f.found(p, searched)
	}
	return nil, &NotFoundError{Request: request, Searched: searched}
}

func (f *Finder) found(p *Plugin, searched []string) (*Plugin, error) {
	p.Searched = searched
	f.complete(p)
	return p, nil
}

// complete fills in the package, NVIDIA library folders and CUDA folder of a found plugin.
func (f *Finder) complete(p *Plugin) {
	p.Package = packageOf(p.Path)
	if !p.CUDA() {
		return
	}
	// JAX's plugin sits in site-packages/jax_plugins/xla_cudaN/; a go-xla install keeps
	// nvidia/ beside the plugin's folder.
	dir := filepath.Dir(p.Path)
	var nvidia []string
	for _, up := range []string{filepath.Dir(filepath.Dir(dir)), filepath.Dir(dir), dir} {
		n := filepath.Join(up, "nvidia")
		if isDir(n) && !slices.Contains(nvidia, n) {
			nvidia = append(nvidia, n)
		}
	}
	for _, n := range nvidia {
		// nvidia/<package>/lib (CUDA 12 wheels) and nvidia/cu13/lib (CUDA 13 wheels).
		libs, _ := filepath.Glob(filepath.Join(n, "*", "lib"))
		sort.Strings(libs)
		for _, l := range libs {
			if hasSharedLib(l) {
				p.LibDirs = append(p.LibDirs, l)
			}
		}
	}
	cudas := f.SystemCUDA
	if cudas == nil {
		for _, k := range []string{"CUDA_HOME", "CUDA_PATH"} {
			if v := f.getenv(k); v != "" {
				cudas = append(cudas, v)
			}
		}
		cudas = append(cudas, "/usr/local/cuda")
	}
	for _, n := range nvidia {
		more, _ := filepath.Glob(filepath.Join(n, "*"))
		sort.Strings(more)
		cudas = append(cudas, more...)
	}
	for _, c := range cudas {
		if isDir(filepath.Join(c, "nvvm", "libdevice")) {
			p.CUDADir = c
			break
		}
	}
}

// Flags are the XLA flags fedpipe runs a plugin with: CUDA kernels from the CUDA folder
// found, and deterministic GPU kernels (scatter-adds and reductions without atomics, fixed
// autotuning), so that a rerun on the same device gives the same bits.
func (p *Plugin) Flags() []string {
	if !p.CUDA() {
		return nil
	}
	flags := []string{"--xla_gpu_deterministic_ops=true"}
	if p.CUDADir != "" {
		flags = append(flags, "--xla_gpu_cuda_data_dir="+p.CUDADir)
	}
	return flags
}

// Environ returns the variables to set (name, value) for the plugin to load and run as
// fedpipe expects, given the current environment: the NVIDIA library folders ahead of
// $LD_LIBRARY_PATH, and Flags added to $XLA_FLAGS (a flag the user set is kept as set).
// go-xla's own guess of the CUDA folder (GOPJRT_CUDA_CHECKS) is turned off for CUDA.
func (p *Plugin) Environ(getenv func(string) string) [][2]string {
	if getenv == nil {
		getenv = os.Getenv
	}
	var out [][2]string
	if len(p.LibDirs) > 0 {
		have := filepath.SplitList(getenv(EnvLibraryPath))
		var add []string
		for _, d := range p.LibDirs {
			if !slices.Contains(have, d) {
				add = append(add, d)
			}
		}
		if len(add) > 0 {
			out = append(out, [2]string{EnvLibraryPath, strings.Join(append(add, slices.DeleteFunc(have, func(s string) bool { return s == "" })...), string(filepath.ListSeparator))})
		}
	}
	flags := getenv(EnvXLAFlags)
	changed := false
	for _, fl := range p.Flags() {
		name, _, _ := strings.Cut(fl, "=")
		if !strings.Contains(flags, name) {
			flags = strings.TrimSpace(flags + " " + fl)
			changed = true
		}
	}
	if changed {
		out = append(out, [2]string{EnvXLAFlags, flags})
	}
	if p.CUDA() && getenv("GOPJRT_CUDA_CHECKS") == "" {
		out = append(out, [2]string{"GOPJRT_CUDA_CHECKS", "0"})
	}
	return out
}

// Identity is the plugin's part of a backend identity: its name and, since results depend
// on the plugin's compiler, its package version when known, and always a hash of its file.
func (p *Plugin) Identity() (string, error) {
	h, err := osfile.SHA256(p.Path)
	if err != nil {
		return "", err
	}
	id := p.Name + "@" + h[:16]
	if p.Package != "" {
		id = p.Name + "@" + strings.ReplaceAll(p.Package, " ", "-") + "-" + h[:16]
	}
	return id, nil
}

// sitePackages lists the site-packages folders to search, without duplicates.
func (f *Finder) sitePackages() []string {
	var dirs []string
	if f.SitePackages != nil {
		dirs = f.SitePackages()
	} else {
		dirs = pythonSitePackages(f.getenv(EnvPython))
		if v := f.getenv("VIRTUAL_ENV"); v != "" {
			dirs = append(dirs, globAll(filepath.Join(v, "lib", "python3*", "site-packages"))...)
		}
		dirs = append(dirs, globAll("/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
			"/usr/lib/python3/dist-packages", "/opt/*/.venv/lib/python3*/site-packages", "/opt/*/lib/python3*/site-packages")...)
		if h := f.home(); h != "" {
			dirs = append(dirs, globAll(filepath.Join(h, ".local", "lib", "python3*", "site-packages"))...)
		}
	}
	var out []string
	for _, d := range dirs {
		d = filepath.Clean(d)
		if isDir(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// pythonSitePackages asks a Python interpreter (python, else python3 on $PATH) for its
// site-packages folders; none when there is no interpreter or it does not answer in 10 s.
func pythonSitePackages(python string) []string {
	if python == "" {
		var err error
		if python, err = exec.LookPath("python3"); err != nil {
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c",
		"import site,sys\nfor p in site.getsitepackages()+[site.getusersitepackages()]+sys.path: print(p)").Output()
	if err != nil {
		return nil
	}
	var dirs []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" && filepath.IsAbs(l) &&
			(strings.HasSuffix(l, "site-packages") || strings.HasSuffix(l, "dist-packages")) {
			dirs = append(dirs, l)
		}
	}
	return dirs
}

// packageOf names the Python distribution that installed a plugin, from the
// <name>-<version>.dist-info folder beside its package, when there is one that lists it.
func packageOf(plugin string) string {
	pkgDir := filepath.Dir(plugin) // site-packages/jax_plugins/xla_cuda13
	sp := filepath.Dir(filepath.Dir(pkgDir))
	rel, err := filepath.Rel(sp, plugin)
	if err != nil {
		return ""
	}
	infos, _ := filepath.Glob(filepath.Join(sp, "*.dist-info"))
	sort.Strings(infos)
	for _, info := range infos {
		record, err := os.ReadFile(filepath.Join(info, "RECORD"))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(record), "\n") {
			if file, _, _ := strings.Cut(l, ","); file == filepath.ToSlash(rel) {
				base := strings.TrimSuffix(filepath.Base(info), ".dist-info")
				if i := strings.LastIndex(base, "-"); i > 0 {
					return strings.ReplaceAll(base[:i], "_", "-") + " " + base[i+1:]
				}
				return base
			}
		}
	}
	return ""
}

// nameOfFile is the plugin name a library's file name carries.
func nameOfFile(path string) string {
	base := filepath.Base(path)
	if n, ok := strings.CutPrefix(base, "pjrt_c_api_"); ok {
		if n, ok = strings.CutSuffix(n, "_plugin.so"); ok {
			return n
		}
	}
	if strings.Contains(base, "cuda") {
		return "cuda"
	}
	return strings.TrimSuffix(base, ".so")
}

func globAll(patterns ...string) []string {
	var out []string
	for _, p := range patterns {
		m, _ := filepath.Glob(p)
		sort.Strings(m)
		out = append(out, m...)
	}
	return out
}

func hasSharedLib(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.so*"))
	return len(m) > 0
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
