package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/model"
)

// fakeJAX lays out a Python site-packages folder holding JAX's CUDA plugin (a file that is
// no real library) and an NVIDIA library folder, and an interpreter script that reports it.
func fakeJAX(t *testing.T) (python, plugin, libs string) {
	root := t.TempDir()
	sp := filepath.Join(root, "lib", "python3.12", "site-packages")
	plugin = filepath.Join(sp, "jax_plugins", "xla_cuda13", "xla_cuda_plugin.so")
	libs = filepath.Join(sp, "nvidia", "cublas", "lib")
	for _, f := range []string{plugin, filepath.Join(libs, "libcublas.so.13")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("not a library"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	python = filepath.Join(root, "python")
	if err := os.WriteFile(python, []byte("#!/bin/sh\necho "+sp+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return python, plugin, libs
}

func TestBackendCommand(t *testing.T) {
	code, out, errOut := fedpipe(t, "backend")
	if code != exitOK || !strings.Contains(out, "backend:  "+model.CPUBackend) || !strings.Contains(out, model.BackendID(model.CPUBackend)) {
		t.Fatalf("backend: %d %q %q", code, out, errOut)
	}
	python, plugin, libs := fakeJAX(t)
	t.Setenv("FEDPIPE_PYTHON", python)
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", "")
	t.Setenv("LD_LIBRARY_PATH", "")
	t.Setenv("XLA_FLAGS", "")
	code, out, errOut = fedpipe(t, "backend", "xla:cuda", "--json")
	if !model.XLACompiled {
		// The plugin is found, and the message says how to get a binary that can load it.
		if code != exitInvalid || !strings.Contains(errOut, plugin) || !strings.Contains(errOut, "make build-xla") {
			t.Fatalf("backend xla:cuda without XLA: %d %q %q", code, out, errOut)
		}
		return
	}
	if code != exitOK {
		t.Fatalf("backend xla:cuda: %d %q %q", code, out, errOut)
	}
	var got struct {
		Backend string
		Plugin  struct {
			Path string
			Env  map[string]string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Backend != "xla:"+plugin || got.Plugin.Path != plugin || got.Plugin.Env["LD_LIBRARY_PATH"] != libs ||
		!strings.Contains(got.Plugin.Env["XLA_FLAGS"], "--xla_gpu_deterministic_ops=true") || got.Plugin.Env["NVIDIA_TF32_OVERRIDE"] != "0" {
		t.Errorf("backend xla:cuda --json: %s", out)
	}
	code, out, _ = fedpipe(t, "backend", "xla:cuda", "--env")
	if code != exitOK || !strings.Contains(out, "export LD_LIBRARY_PATH="+libs+"\n") {
		t.Errorf("--env: %d %q", code, out)
	}
}

func TestBackendCommandNotFound(t *testing.T) {
	t.Setenv("FEDPIPE_PYTHON", "/nonexistent/python")
	dir := t.TempDir()
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", dir)
	code, _, errOut := fedpipe(t, "backend", "xla:cuda")
	if code != exitInvalid || !strings.Contains(errOut, filepath.Join(dir, "pjrt_c_api_cuda_plugin.so")) || !strings.Contains(errOut, "never downloaded") {
		t.Errorf("backend xla:cuda with no plugin: %d %q", code, errOut)
	}
	if code, _, _ := fedpipe(t, "backend", "a", "b"); code != exitInvalid {
		t.Errorf("two backends: exit %d", code)
	}
}

func TestBenchRoundSetting(t *testing.T) {
	code, _, errOut := fedpipe(t, "bench", "--round", "--setting", "fedavg-mars")
	if code != exitInvalid || !strings.Contains(errOut, "fedobp-fmnist") || !strings.Contains(errOut, "fedselect-cifar10") {
		t.Errorf("unknown setting: exit %d, %q", code, errOut)
	}
}
