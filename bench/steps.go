package bench

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/gomlx/gemm"
	"github.com/fedpipe/fedpipe/model"
)

// StepOptions are what Steps measures.
type StepOptions struct {
	// Arch is the model measured at each of Shapes ("HxWxC", H = W), with 10 classes.
	Arch   string
	Shapes []string
	// Batch is the training batch size; Steps the training steps measured per shape.
	Batch, Steps int
	// Script is the PyTorch step reference ("": torch_cnn4.py in ../shared/bench or
	// shared/bench, if present; cnn4 only), run with Python unless NoTorch.
	Script, Python string
	NoTorch        bool
	// Oracle also measures the reference backend (model.OracleBackend) and the speed-up
	// over it.
	Oracle bool
	// Kernels are the GEMM kernel ISAs timed (as UseKernels returns them).
	Kernels []string
}

// UseKernels checks the GEMM kernel ISAs asked for (none: the one in use), each available
// here and given once, and returns them with a function that restores the kernel in use
// now (bench may run inside a test's process).
func UseKernels(asked []string) (isas []string, restore func(), err error) {
	was := gemm.KernelISA()
	restore = func() { _ = gemm.SetKernelISA(was) }
	isas = asked
	if len(isas) == 0 {
		isas = []string{was}
	}
	for i, isa := range isas {
		if err := gemm.SetKernelISA(isa); err != nil {
			return nil, restore, invalidf("bench: --kernel: %v", err)
		}
		if slices.Index(isas, isa) != i {
			return nil, restore, invalidf("bench: --kernel: %s given twice", isa)
		}
	}
	return isas, restore, nil
}

// Steps measures o.Arch's training (SGD with momentum) and inference samples/s on backend
// at each shape, with each kernel of o.Kernels, then runs the PyTorch reference on the same
// shapes, and prints a row per shape, phase and kernel with the ratios.
func Steps(backend string, o StepOptions, stdout, stderr io.Writer) error {
	isas := o.Kernels
	script := o.Script
	if script == "" {
		for _, p := range []string{"../shared/bench/torch_cnn4.py", "shared/bench/torch_cnn4.py"} {
			if _, err := os.Stat(p); err == nil {
				script = p
				break
			}
		}
	}
	if o.Arch != model.ArchCNN4 {
		script = "" // the reference script is the cnn4
	}
	fmt.Fprintf(stdout, "model %s, backend %s, batch %d, %d steps; GEMM kernel (fpfast backend) timed in order: %s\n", o.Arch, model.BackendID(backend), o.Batch, o.Steps, strings.Join(kernelOrder(isas), ", "))
	header := fmt.Sprintf("%-9s %-10s %-7s %14s %14s %8s", "shape", "phase", "kernel", "fedpipe/s", "pytorch/s", "ratio")
	if o.Oracle {
		header += fmt.Sprintf(" %14s %10s", "oracle/s", "vs oracle")
	}
	fmt.Fprintln(stdout, header)
	for _, s := range o.Shapes {
		var h, w, c int
		if _, err := fmt.Sscanf(strings.ReplaceAll(s, "x", " "), "%d %d %d", &h, &w, &c); err != nil || h != w {
			return invalidf("bench: --shape %q: want HxWxC with H = W", s)
		}
		spec := model.ModelSpec{Arch: o.Arch, InputShape: []int{h, w, c}, NumClasses: 10}
		if err := spec.Validate(); err != nil {
			return invalidf("bench: --arch %s --shape %s: %v", o.Arch, s, err)
		}
		// The kernels are timed in kernelOrder (a, b, b, a): each figure is the mean of two
		// passes, each BenchModel building and warming up its own model.
		train, infer := make([]float64, len(isas)), make([]float64, len(isas))
		passes := float64(len(kernelOrder(isas)) / len(isas))
		for _, isa := range kernelOrder(isas) {
			_ = gemm.SetKernelISA(isa) // checked by UseKernels
			tr, in, err := model.BenchModel(backend, spec, o.Batch, o.Steps)
			if err != nil {
				return fmt.Errorf("bench: %v", err)
			}
			k := slices.Index(isas, isa)
			train[k] += tr / passes
			infer[k] += in / passes
		}
		var oracleTrain, oracleInfer float64
		if o.Oracle {
			var err error
			if oracleTrain, oracleInfer, err = model.BenchModel(model.OracleBackend, spec, o.Batch, o.Steps); err != nil {
				return fmt.Errorf("bench: %v", err)
			}
		}
		var ref map[string]float64
		if !o.NoTorch && script != "" {
			var err error
			ref, err = runTorch(o.Python, script, h, c, o.Batch, stderr)
			if err != nil {
				fmt.Fprintf(stderr, "fedpipe bench: PyTorch reference unavailable: %v\n", err)
			}
		}
		for _, row := range []struct {
			phase  string
			ours   []float64
			oracle float64
			key    string
		}{{"train", train, oracleTrain, "torch_train_samples_per_s"}, {"infer", infer, oracleInfer, "torch_infer_samples_per_s"}} {
			for i, isa := range isas {
				theirs, ratio := "-", "-"
				if v, ok := ref[row.key]; ok && v > 0 {
					theirs = fmt.Sprintf("%.1f", v)
					ratio = fmt.Sprintf("%.2fx", row.ours[i]/v)
				}
				line := fmt.Sprintf("%-9s %-10s %-7s %14.1f %14s %8s", s, row.phase, isa, row.ours[i], theirs, ratio)
				if o.Oracle {
					line += fmt.Sprintf(" %14.1f %9.2fx", row.oracle, row.ours[i]/row.oracle)
				}
				fmt.Fprintln(stdout, line)
			}
		}
	}
	return nil
}

// runTorch runs the PyTorch step reference (torch_cnn4.py) at one shape on 2 threads.
func runTorch(python, script string, hw, channels, batch int, stderr io.Writer) (map[string]float64, error) {
	return runScript(python, script, []string{"--threads", "2", "--hw", strconv.Itoa(hw),
		"--channels", strconv.Itoa(channels), "--batch", strconv.Itoa(batch)}, stderr)
}
