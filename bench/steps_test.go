package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/errs"
	"github.com/fedpipe/fedpipe/gomlx/gemm"
	"github.com/fedpipe/fedpipe/model"
)

// UseKernels defaults to the kernel in use, refuses one given twice or one this machine
// lacks as invalid input, and its restore puts the kernel in use back.
func TestUseKernels(t *testing.T) {
	was := gemm.KernelISA()
	isas, restore, err := UseKernels(nil)
	restore()
	if err != nil || len(isas) != 1 || isas[0] != was {
		t.Fatalf("UseKernels(nil) = %v, %v; want [%s]", isas, err, was)
	}
	for _, asked := range [][]string{{was, was}, {"mmx"}} {
		_, restore, err := UseKernels(asked)
		restore()
		if !errors.Is(err, errs.ErrInvalid) || !strings.HasPrefix(err.Error(), "bench: --kernel: ") {
			t.Errorf("UseKernels(%v): %v, want an invalid --kernel", asked, err)
		}
		if gemm.KernelISA() != was {
			t.Errorf("UseKernels(%v) left kernel %s, not %s", asked, gemm.KernelISA(), was)
		}
	}
}

// Steps prints its header and a train and an infer row per shape, and refuses a shape
// that is not square as invalid input.
func TestSteps(t *testing.T) {
	o := StepOptions{Arch: model.ArchCNN4, Shapes: []string{"28x28x1"}, Batch: 4, Steps: 2, NoTorch: true, Kernels: []string{gemm.KernelISA()}}
	var out, errb bytes.Buffer
	if err := Steps(model.CPUBackend, o, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "model cnn4, backend "+model.BackendID(model.CPUBackend)) ||
		!strings.HasPrefix(lines[2], "28x28x1   train") || !strings.HasPrefix(lines[3], "28x28x1   infer") {
		t.Errorf("output:\n%s", out.String())
	}
	o.Shapes = []string{"28x27x1"}
	if err := Steps(model.CPUBackend, o, &out, &errb); !errors.Is(err, errs.ErrInvalid) || !strings.Contains(err.Error(), `--shape "28x27x1"`) {
		t.Errorf("a shape with H ≠ W: %v", err)
	}
}

// An unknown setting is invalid input, naming the settings there are.
func TestRoundSetting(t *testing.T) {
	var out bytes.Buffer
	for _, f := range []func(string, RoundOptions, *bytes.Buffer) error{
		func(b string, o RoundOptions, w *bytes.Buffer) error { return Round(b, o, w, w) },
		func(b string, o RoundOptions, w *bytes.Buffer) error { return Journal(b, o, w, w) },
	} {
		err := f(model.CPUBackend, RoundOptions{Setting: "fedavg-mars"}, &out)
		if !errors.Is(err, errs.ErrInvalid) || !strings.Contains(err.Error(), SettingFedOBP) || !strings.Contains(err.Error(), SettingFedSelect) {
			t.Errorf("unknown setting: %v", err)
		}
	}
	if out.Len() != 0 {
		t.Errorf("printed before refusing: %q", out.String())
	}
}
