package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/model/gemm"
	"github.com/fedpipe/fedpipe/model/xlaenv"
)

// backendCmd says which backend a configuration resolves to and, for XLA, which plugin it
// loads from where, with which environment; --env prints that environment as shell exports
// (for scripts and test binaries that do not re-execute themselves as fedpipe does).
func backendCmd(c *call) error {
	args, stdout := c.args, c.stdout
	fs := c.flags()
	asEnv := fs.Bool("env", false, "print the environment an xla backend runs with as shell export lines")
	asJSON := fs.Bool("json", false, "print one JSON object")
	check := fs.Bool("check", false, "train one small federated round on BACKEND and on --against and compare them (1e-4 relative), "+
		"repeat it (same bits), and, where the model pads batches, train it in lockstep too; exit 1 if anything is off")
	against := fs.String("against", model.CPUBackend, "with --check: the reference backend")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe backend [BACKEND] [--env|--json] [--check [--against fpfast]]\n\n"+
			"Resolves BACKEND (default $GOMLX_BACKEND, else %s) as run and bench would: its id (part of every\n"+
			"key) and, for xla:PLUGIN, the PJRT plugin found (PLUGIN: cuda, cpu, or a .so's absolute path),\n"+
			"every place searched, the NVIDIA library and CUDA folders, and the environment it runs with.\n"+
			"XLA needs a binary built with `make build-xla`; this one has it: %v.\n\nFlags:\n%s",
			model.CPUBackend, model.XLACompiled, fs.FlagUsages())
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return failure("fedpipe backend", &manifest.InputError{File: "arguments", Msg: "give at most one backend"})
	}
	backend, err := model.ResolveBackend(fs.Arg(0))
	if err != nil {
		return failure("fedpipe backend", &manifest.InputError{File: "--backend", Msg: err.Error()})
	}
	out := map[string]any{"backend": backend, "id": model.BackendID(backend), "xla_compiled": model.XLACompiled}
	var p *xlaenv.Plugin
	var env [][2]string
	if strings.HasPrefix(backend, "xla:") {
		if p, env, err = model.XLAPlugin(backend); err != nil {
			return failure("fedpipe backend", &manifest.InputError{File: "--backend", Msg: err.Error()})
		}
		envMap := map[string]string{}
		for _, kv := range env {
			envMap[kv[0]] = kv[1]
		}
		out["plugin"] = map[string]any{"name": p.Name, "path": p.Path, "package": p.Package, "lib_dirs": p.LibDirs,
			"cuda_dir": p.CUDADir, "searched": p.Searched, "env": envMap}
	}
	checkFailed := false
	var checked *model.BackendCheck
	if *check {
		ref, err := model.ResolveBackend(*against)
		if err != nil {
			return failure("fedpipe backend", &manifest.InputError{File: "--against", Msg: err.Error()})
		}
		res, err := model.CheckBackend(backend, ref, model.DefaultCheckConfig())
		if err != nil {
			return failure("fedpipe backend --check", err)
		}
		checkFailed = res.RelDiff > checkTolerance || !res.Repeatable ||
			(res.Lockstep && (!res.LockstepRepeatable || res.LockstepRelDiff > checkTolerance))
		out["check"] = res
		out["check_ok"] = !checkFailed
		checked = &res
	}
	var code error // nil, or exit 1 when --check found the backend off
	if checkFailed {
		code = exitErr(exitFailure)
	}
	switch {
	case *asJSON:
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
		return code
	case *asEnv:
		for _, kv := range env {
			fmt.Fprintf(stdout, "export %s=%s\n", kv[0], shellQuote(kv[1]))
		}
		return nil
	}
	fmt.Fprintf(stdout, "backend:  %s\nid:       %s\n", backend, model.BackendID(backend))
	if p == nil {
		xla := "no (make build-xla builds it)"
		if model.XLACompiled {
			xla = "yes"
		}
		fmt.Fprintf(stdout, "xla:      %s\n", xla)
		fmt.Fprintf(stdout, "gemm:     %s kernels in fpfast (results as %s; $FEDPIPE_KERNEL=avx2 forces AVX2)\n", gemm.KernelISA(), gemm.Kernel())
		printCheck(stdout, checked, checkFailed)
		return code
	}
	fmt.Fprintf(stdout, "plugin:   %s (%s)\n", p.Path, p.Name)
	if p.Package != "" {
		fmt.Fprintf(stdout, "package:  %s\n", p.Package)
	}
	fmt.Fprintf(stdout, "searched: %s\n", strings.Join(p.Searched, "\n          "))
	if p.CUDA() {
		cuda := p.CUDADir
		if cuda == "" {
			cuda = "none found (no nvvm/libdevice in $CUDA_HOME, /usr/local/cuda or site-packages/nvidia/*): XLA falls back on its own search"
		}
		fmt.Fprintf(stdout, "libs:     %s\ncuda:     %s\n", strings.Join(p.LibDirs, "\n          "), cuda)
	}
	for _, kv := range env {
		fmt.Fprintf(stdout, "env:      %s=%s\n", kv[0], kv[1])
	}
	printCheck(stdout, checked, checkFailed)
	return code
}

// printCheck prints a backend --check result (nothing for nil).
func printCheck(w io.Writer, res *model.BackendCheck, failed bool) {
	if res == nil {
		return
	}
	same := map[bool]string{true: "same bits", false: "DIFFERENT bits"}
	fmt.Fprintf(w, "check:    one round, %d clients, %d steps (%d samples): %.3g s here (compilation included), %.3g s on %s\n",
		res.Clients, res.Steps, res.Samples, res.Seconds, res.ReferenceSeconds, res.Reference)
	fmt.Fprintf(w, "          vs %s: relative difference %.3g (tolerance %g; most in one tensor: %.3g, %s)\n",
		res.Reference, res.RelDiff, checkTolerance, res.WorstTensor, res.Worst)
	fmt.Fprintf(w, "          rerun: %s\n", same[res.Repeatable])
	if res.Lockstep {
		fmt.Fprintf(w, "          lockstep: %.3g from client by client; rerun: %s\n", res.LockstepRelDiff, same[res.LockstepRepeatable])
	}
	fmt.Fprintf(w, "          %s\n", map[bool]string{false: "ok", true: "FAILED"}[failed])
}

// checkTolerance is the largest relative difference (‖a − b‖₂/‖b‖₂ over all parameters)
// backend --check accepts between two backends' parameters after a round (docs/gpus.md).
const checkTolerance = 1e-4

// reexecMarker is set in the environment of a fedpipe that re-executed itself for XLA, so
// it does so at most once.
const reexecMarker = "FEDPIPE_XLA_REEXEC"

// reexecForXLA restarts this program with the NVIDIA library folders on $LD_LIBRARY_PATH
// when its arguments (--backend) or $GOMLX_BACKEND ask for an xla backend whose plugin
// needs them: the loader reads that path once, when a process starts. It returns only when
// no restart is needed or possible; a backend that does not resolve fails later, where the
// command resolves it, with its own message.
func reexecForXLA(args []string) {
	if !model.XLACompiled || os.Getenv(reexecMarker) != "" {
		return
	}
	env, err := model.XLAProcessEnv(backendArg(args))
	if err != nil {
		return
	}
	restart := false
	for _, kv := range env {
		if kv[0] == xlaenv.EnvLibraryPath {
			restart = true
		}
		if os.Setenv(kv[0], kv[1]) != nil {
			return
		}
	}
	if !restart {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	os.Setenv(reexecMarker, "1")
	err = syscall.Exec(self, append([]string{os.Args[0]}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "fedpipe: could not restart with $%s set for the XLA plugin (%v); going on without\n", xlaenv.EnvLibraryPath, err)
}

// backendArg is the value of the first --backend flag in args ("" if none).
func backendArg(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, name := range []string{"--backend", "-backend"} {
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v
			}
			if a == name && i+1 < len(args) {
				return args[i+1]
			}
		}
	}
	return ""
}
