package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/gomlx/gemm"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// bench measures CNN4 training and inference throughput on our backend and, in the same
// invocation, PyTorch's on the same shapes, and prints both with their ratio.
func benchCmd(c *call) error {
	args, stdout, stderr := c.args, c.stdout, c.stderr
	fs := c.flags()
	backendFlag := fs.String("backend", "", "GoMLX backend (default $GOMLX_BACKEND, else the built-in CPU backend)")
	arch := fs.String("arch", model.ArchCNN4, "model to measure: cnn4, fedavgcnn, resnet18, resnet18_imagenet (the PyTorch reference covers cnn4 only)")
	shapes := fs.StringSlice("shape", []string{"28x28x1", "32x32x3"}, "input shapes HxWxC to measure")
	batch := fs.Int("batch", 32, "training batch size")
	steps := fs.Int("steps", 60, "training steps measured per shape")
	torchScript := fs.String("torch", "", "PyTorch reference script (default ../shared/bench/torch_cnn4.py, with --round torch_round.py, if present)")
	python := fs.String("python", "/usr/bin/python3", "Python with torch (Debian python3-torch)")
	noTorch := fs.Bool("no-torch", false, "skip the PyTorch reference")
	oracle := fs.Bool("oracle", false, "also measure the reference backend ("+model.OracleBackend+") and print the speed-up over it")
	round := fs.Bool("round", false, "time one FL round of the FedOBP-FMNIST setting and one evaluation of 100 clients beside ../shared/bench/torch_round.py")
	rounds := fs.Int("rounds", 2, "with --round: rounds timed after a warm-up round")
	workers := fs.Int("clients-at-once", 0, "with --round: clients trained (and evaluated) side by side, each on one core (0: GOMAXPROCS; 1: one after another, each op on every core)")
	ft := fs.Bool("ft", true, "with --round: also time the evaluation after 5 fine-tuning epochs per client (minutes)")
	setting := fs.String("setting", settingFedOBP, "with --round: "+settingFedOBP+" (FedOBP Table 6: cnn4, 10 of 100 Dir(0.1)-like clients; PyTorch reference) or "+
		settingFedSelect+" (FedSelect Table 1: ResNet-18, 10 clients of 100 samples, 3 epochs)")
	journal := fs.Bool("journal", false, "with --round: time the rounds without and with the progress journal a train stage publishes after each round (fedpipe serve, status --watch), alternately in one invocation, and print the difference")
	lockstep := fs.Bool("lockstep", false, "with --round: train a round's clients in one compiled step (MultiSession), as runs on XLA do (default: on for xla backends)")
	kernels := fs.StringSlice("kernel", nil, "GEMM kernel ISAs of the fpfast backend to time in this invocation, e.g. avx512,avx2 (default: the one in use; available here: "+
		strings.Join(gemm.KernelISAs(), ",")+"); several are timed twice, in the order given and then reversed, and each figure is the mean of its two passes; they compute the same bits")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe bench [flags]\n\nMeasures a model's (default cnn4) training (SGD with momentum) and inference (batch 256) samples/s on the GoMLX backend,\nthen runs the PyTorch reference on the same shapes and prints the ratios.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	backend, err := model.ResolveBackend(*backendFlag)
	if err != nil {
		return failf(exitInvalid, "fedpipe bench: %v", err)
	}
	was := gemm.KernelISA()
	defer func() { _ = gemm.SetKernelISA(was) }() // bench may run in-process (tests)
	isas := *kernels
	if len(isas) == 0 {
		isas = []string{gemm.KernelISA()}
	}
	for i, isa := range isas {
		if err := gemm.SetKernelISA(isa); err != nil {
			return failf(exitInvalid, "fedpipe bench: --kernel: %v", err)
		}
		if slices.Index(isas, isa) != i {
			return failf(exitInvalid, "fedpipe bench: --kernel: %s given twice", isa)
		}
	}
	if *round {
		lock := *lockstep
		if !fs.Changed("lockstep") {
			lock = train.LockstepDefault(backend)
		}
		opts := roundOptions{setting: *setting, rounds: *rounds, workers: *workers, ft: *ft, lockstep: lock,
			script: *torchScript, python: *python, noTorch: *noTorch, kernels: isas}
		if *journal {
			return benchJournal(backend, opts, stdout, stderr)
		}
		return benchRound(backend, opts, stdout, stderr)
	}
	script := *torchScript
	if script == "" {
		for _, p := range []string{"../shared/bench/torch_cnn4.py", "shared/bench/torch_cnn4.py"} {
			if _, err := os.Stat(p); err == nil {
				script = p
				break
			}
		}
	}
	if *arch != model.ArchCNN4 {
		script = "" // the reference script is the cnn4
	}
	fmt.Fprintf(stdout, "model %s, backend %s, batch %d, %d steps; GEMM kernel (fpfast backend) timed in order: %s\n", *arch, model.BackendID(backend), *batch, *steps, strings.Join(kernelOrder(isas), ", "))
	header := fmt.Sprintf("%-9s %-10s %-7s %14s %14s %8s", "shape", "phase", "kernel", "fedpipe/s", "pytorch/s", "ratio")
	if *oracle {
		header += fmt.Sprintf(" %14s %10s", "oracle/s", "vs oracle")
	}
	fmt.Fprintln(stdout, header)
	for _, s := range *shapes {
		var h, w, c int
		if _, err := fmt.Sscanf(strings.ReplaceAll(s, "x", " "), "%d %d %d", &h, &w, &c); err != nil || h != w {
			return failf(exitInvalid, "fedpipe bench: --shape %q: want HxWxC with H = W", s)
		}
		spec := model.ModelSpec{Arch: *arch, InputShape: []int{h, w, c}, NumClasses: 10}
		if err := spec.Validate(); err != nil {
			return failf(exitInvalid, "fedpipe bench: --arch %s --shape %s: %v", *arch, s, err)
		}
		// The kernels are timed in kernelOrder (a, b, b, a): each figure is the mean of two
		// passes, each BenchModel building and warming up its own model.
		train, infer := make([]float64, len(isas)), make([]float64, len(isas))
		passes := float64(len(kernelOrder(isas)) / len(isas))
		for _, isa := range kernelOrder(isas) {
			_ = gemm.SetKernelISA(isa) // checked above
			tr, in, err := model.BenchModel(backend, spec, *batch, *steps)
			if err != nil {
				return failf(exitFailure, "fedpipe bench: %v", err)
			}
			k := slices.Index(isas, isa)
			train[k] += tr / passes
			infer[k] += in / passes
		}
		var oracleTrain, oracleInfer float64
		if *oracle {
			if oracleTrain, oracleInfer, err = model.BenchModel(model.OracleBackend, spec, *batch, *steps); err != nil {
				return failf(exitFailure, "fedpipe bench: %v", err)
			}
		}
		var ref map[string]float64
		if !*noTorch && script != "" {
			ref, err = runTorch(*python, script, h, c, *batch, stderr)
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
				if *oracle {
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
