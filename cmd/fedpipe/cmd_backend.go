package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/gomlx"
	"github.com/fedpipe/fedpipe/launch"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// cmdBackend says which backend a configuration resolves to and, for XLA, which plugin it
// loads from where, with which environment; --env prints that environment as shell exports
// (for scripts and test binaries that do not re-execute themselves as fedpipe does).
var cmdBackend = &command{
	name:      "backend",
	overview:  []string{"backend [BACKEND]         what a backend resolves to: its id, the XLA plugin and environment"},
	usageLine: "fedpipe backend [BACKEND] [--env|--json] [--check [--against fpfast]]",
	long: fmt.Sprintf("Resolves BACKEND (default $GOMLX_BACKEND, else %s) as run and bench would: its id (part of every\n"+
		"key) and, for xla:PLUGIN, the PJRT plugin found (PLUGIN: cuda, cpu, or a .so's absolute path),\n"+
		"every place searched, the NVIDIA library and CUDA folders, and the environment it runs with.\n"+
		"XLA needs a binary built with `make build-xla`; this one has it: %v.", model.CPUBackend, model.XLACompiled),
	flags: withFlags(backendCmd),
}

// backendFlags are backend's flags.
type backendFlags struct {
	env, json, check bool
	against          string
}

func (f *backendFlags) declare(fs *pflag.FlagSet, _ flagGroup) {
	fs.BoolVar(&f.env, "env", false, "print the environment an xla backend runs with as shell export lines")
	fs.BoolVar(&f.json, "json", false, "print one JSON object")
	fs.BoolVar(&f.check, "check", false, "train one small federated round on BACKEND and on --against and compare them (1e-4 relative), "+
		"repeat it (same bits), and, where the model pads batches, train it in lockstep too; exit 1 if anything is off")
	fs.StringVar(&f.against, "against", model.CPUBackend, "with --check: the reference backend")
}

// backendCmd is `fedpipe backend [BACKEND]`.
func backendCmd(c *call, f *backendFlags, args []string) error {
	stdout := c.stdout
	if len(args) > 1 {
		return failure("fedpipe backend", &manifest.InputError{File: "arguments", Msg: "give at most one backend"})
	}
	backend, err := model.ResolveBackend(c.fs.Arg(0))
	if err != nil {
		return failure("fedpipe backend", &manifest.InputError{File: "--backend", Msg: err.Error()})
	}
	d, err := gomlx.Describe(backend, model.BackendID(backend))
	if err != nil {
		return failure("fedpipe backend", &manifest.InputError{File: "--backend", Msg: err.Error()})
	}
	out := d.Fields()
	var checked *model.BackendCheck
	if f.check {
		ref, err := model.ResolveBackend(f.against)
		if err != nil {
			return failure("fedpipe backend", &manifest.InputError{File: "--against", Msg: err.Error()})
		}
		res, err := model.CheckBackend(backend, ref, model.DefaultCheckConfig())
		if err != nil {
			return failure("fedpipe backend --check", err)
		}
		out["check"], out["check_ok"], checked = res, !res.Failed(), &res
	}
	var code error // nil, or exit 1 when --check found the backend off
	if checked != nil && checked.Failed() {
		code = exitErr(exitFailure)
	}
	switch {
	case f.json:
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
		return code
	case f.env:
		for _, kv := range d.Env {
			fmt.Fprintf(stdout, "export %s=%s\n", kv[0], launch.ShellQuote(kv[1]))
		}
		return nil
	}
	d.WriteText(stdout)
	if checked != nil {
		checked.WriteText(stdout)
	}
	return code
}
