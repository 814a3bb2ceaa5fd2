package xlaenv

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// touch creates a file (and its folders) under root.
func touch(t *testing.T, root string, rel ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{root}, rel...)...)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("fake "+strings.Join(rel, "/")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// jaxSite lays out a site-packages folder as JAX's CUDA wheels install it.
func jaxSite(t *testing.T, root string) string {
	sp := filepath.Join(root, "lib", "python3.12", "site-packages")
	touch(t, sp, "jax_plugins", "xla_cuda12", "xla_cuda_plugin.so")
	touch(t, sp, "jax_plugins", "xla_cuda13", "xla_cuda_plugin.so")
	touch(t, sp, "jax_cuda13_pjrt-0.11.2.dist-info", "RECORD")
	if err := os.WriteFile(filepath.Join(sp, "jax_cuda13_pjrt-0.11.2.dist-info", "RECORD"),
		[]byte("jax_plugins/xla_cuda13/__init__.py,sha256=x,1\njax_plugins/xla_cuda13/xla_cuda_plugin.so,sha256=y,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	touch(t, sp, "nvidia", "cublas", "lib", "libcublas.so.13")
	touch(t, sp, "nvidia", "cuda_runtime", "lib", "libcudart.so.13")
	touch(t, sp, "nvidia", "cu13", "nvvm", "libdevice", "libdevice.10.bc")
	touch(t, sp, "nvidia", "empty", "lib", "README")
	return sp
}

func finder(env map[string]string, sites []string, home string) *Finder {
	return &Finder{
		Getenv:       func(k string) string { return env[k] },
		SitePackages: func() []string { return sites },
		Home:         home,
		SystemCUDA:   []string{},
	}
}

func TestFindsJAXCUDAPlugin(t *testing.T) {
	root := t.TempDir()
	sp := jaxSite(t, root)
	p, err := finder(nil, []string{sp}, filepath.Join(root, "home")).Find("cuda")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(sp, "jax_plugins", "xla_cuda13", "xla_cuda_plugin.so"); p.Path != want {
		t.Errorf("path %s, want the CUDA 13 plugin %s", p.Path, want)
	}
	if p.Name != "cuda" || !p.CUDA() {
		t.Errorf("name %q", p.Name)
	}
	if p.Package != "jax-cuda13-pjrt 0.11.2" {
		t.Errorf("package %q", p.Package)
	}
	wantLibs := []string{filepath.Join(sp, "nvidia", "cublas", "lib"), filepath.Join(sp, "nvidia", "cuda_runtime", "lib")}
	if !slices.Equal(p.LibDirs, wantLibs) {
		t.Errorf("lib dirs %q, want %q (a lib folder without libraries is left out)", p.LibDirs, wantLibs)
	}
	if want := filepath.Join(sp, "nvidia", "cu13"); p.CUDADir != want {
		t.Errorf("CUDA dir %q, want %q", p.CUDADir, want)
	}
	if len(p.Searched) == 0 || !strings.Contains(p.Searched[0], EnvPluginPath) {
		t.Errorf("searched %q should start with the unset $%s", p.Searched, EnvPluginPath)
	}
	id, err := p.Identity()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "cuda@jax-cuda13-pjrt-0.11.2-") || len(id) != len("cuda@jax-cuda13-pjrt-0.11.2-")+16 {
		t.Errorf("identity %q", id)
	}
	// Another plugin file is another identity.
	if err := os.WriteFile(p.Path, []byte("rebuilt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id2, _ := p.Identity(); id2 == id {
		t.Errorf("identity %q did not change with the plugin's contents", id2)
	}
}

func TestPluginPathComesFirst(t *testing.T) {
	root := t.TempDir()
	sp := jaxSite(t, root)
	own := touch(t, root, "plugins", "pjrt_c_api_cuda_plugin.so")
	env := map[string]string{EnvPluginPath: filepath.Join(root, "nothing") + ":" + filepath.Dir(own)}
	p, err := finder(env, []string{sp}, "").Find("cuda")
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != own {
		t.Errorf("path %s, want %s from $%s", p.Path, own, EnvPluginPath)
	}
	if want := []string{filepath.Join(root, "nothing", "pjrt_c_api_cuda_plugin.so"), own}; !slices.Equal(p.Searched, want) {
		t.Errorf("searched %q, want %q", p.Searched, want)
	}
	// Its folder has no nvidia/ beside it: no library folders to add.
	if len(p.LibDirs) != 0 || p.Package != "" {
		t.Errorf("lib dirs %q, package %q", p.LibDirs, p.Package)
	}
}

func TestGoXLAInstallFolder(t *testing.T) {
	home := t.TempDir()
	want := touch(t, home, ".local", "lib", "go-xla", "pjrt_c_api_cpu_plugin.so")
	p, err := finder(nil, nil, home).Find("")
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != want || p.Name != "cpu" || p.CUDA() {
		t.Errorf("got %+v", p)
	}
	if p.Flags() != nil {
		t.Errorf("a CPU plugin needs no XLA flags, got %q", p.Flags())
	}
}

func TestNotFoundNamesEveryPlace(t *testing.T) {
	root := t.TempDir()
	sp := filepath.Join(root, "site-packages")
	if err := os.MkdirAll(sp, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := finder(map[string]string{EnvPluginPath: "/opt/pjrt"}, []string{sp}, root).Find("cuda")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("err %v, want a NotFoundError", err)
	}
	for _, want := range []string{"/opt/pjrt/pjrt_c_api_cuda_plugin.so", filepath.Join(sp, "jax_plugins", "xla_cuda*", "xla_cuda_plugin.so"),
		filepath.Join(root, ".local", "lib", "go-xla", "pjrt_c_api_cuda_plugin.so"), "/usr/local/lib/go-xla/pjrt_c_api_cuda_plugin.so",
		"never downloaded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if _, err := finder(nil, nil, root).Find("/no/such/plugin.so"); !errors.As(err, &nf) || !strings.Contains(err.Error(), "/no/such/plugin.so") {
		t.Errorf("absolute path: %v", err)
	}
	if _, err := finder(nil, nil, root).Find("lib/cuda.so"); err == nil || !strings.Contains(err.Error(), "absolute path") {
		t.Errorf("relative path: %v", err)
	}
}

func TestEnviron(t *testing.T) {
	p := &Plugin{Name: "cuda", LibDirs: []string{"/sp/nvidia/a/lib", "/sp/nvidia/b/lib"}, CUDADir: "/usr/local/cuda"}
	env := map[string]string{EnvLibraryPath: "/sp/nvidia/b/lib:/usr/lib", EnvXLAFlags: "--xla_dump_to=/tmp/d"}
	got := p.Environ(func(k string) string { return env[k] })
	want := [][2]string{
		{EnvLibraryPath, "/sp/nvidia/a/lib:/sp/nvidia/b/lib:/usr/lib"},
		{EnvXLAFlags, "--xla_dump_to=/tmp/d --xla_gpu_deterministic_ops=true --xla_gpu_cuda_data_dir=/usr/local/cuda"},
		{"GOPJRT_CUDA_CHECKS", "0"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("environ\n got %q\nwant %q", got, want)
	}
	// Everything already in place, and the user's own determinism setting kept: nothing to set.
	env = map[string]string{EnvLibraryPath: "/sp/nvidia/a/lib:/sp/nvidia/b/lib",
		EnvXLAFlags: "--xla_gpu_deterministic_ops=false --xla_gpu_cuda_data_dir=/cuda", "GOPJRT_CUDA_CHECKS": "1"}
	if got := p.Environ(func(k string) string { return env[k] }); len(got) != 0 {
		t.Errorf("environ %q, want nothing", got)
	}
}
