package main

import (
	"fmt"
	"strings"

	"github.com/fedpipe/fedpipe/bench"
	"github.com/fedpipe/fedpipe/gomlx/gemm"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// benchCmd measures a model's training and inference throughput, or one federated round,
// on our backend and, in the same invocation, PyTorch's on the same work, and prints both
// with their ratio (package bench).
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
	rounds := fs.Int("rounds", 2, "with --round: rounds timed after a warm-up round; with --methods: rounds a method (default 1; with several the first, which compiles, is left out)")
	workers := fs.Int("clients-at-once", 0, "with --round: clients trained (and evaluated) side by side, each on one core (0: GOMAXPROCS; 1: one after another, each op on every core)")
	ft := fs.Bool("ft", true, "with --round: also time the evaluation after 5 fine-tuning epochs per client (minutes)")
	setting := fs.String("setting", bench.SettingFedOBP, "with --round: "+bench.SettingFedOBP+" (FedOBP Table 6: cnn4, 10 of 100 Dir(0.1)-like clients; PyTorch reference) or "+
		bench.SettingFedSelect+" (FedSelect Table 1: ResNet-18, 10 clients of 100 samples, 3 epochs)")
	journal := fs.Bool("journal", false, "with --round: time the rounds without and with the progress journal a train stage publishes after each round (fedpipe serve, status --watch), alternately in one invocation, and print the difference")
	lockstep := fs.Bool("lockstep", false, "with --round: train a round's clients in one compiled step (MultiSession), as runs on XLA do (default: on for xla backends)")
	kernels := fs.StringSlice("kernel", nil, "GEMM kernel ISAs of the fpfast backend to time in this invocation, e.g. avx512,avx2 (default: the one in use; available here: "+
		strings.Join(gemm.KernelISAs(), ",")+"); several are timed twice, in the order given and then reversed, and each figure is the mean of its two passes; they compute the same bits")
	methods := fs.StringSlice("methods", nil, "time one paper-scale round of each method on its published setting (FedOBP Table 6 FMNIST Dir(0.1); DM-PFL Table 7 MNIST) beside FedAvg's, with the multiple its algorithm implies and where the round's CPU goes; e.g. --methods fedavg,apfl (labels or method names; all: every one)")
	eval := fs.Bool("eval", false, "with --methods: also time one evaluation of every client (with the manifest's fine-tuning) after the rounds")
	profileDir := fs.String("profile-dir", "", "with --methods: write a Go CPU profile of each method's rounds here (go tool pprof)")
	costsFile := fs.String("costs", "", "with --methods: also write the figures as a tab-separated table to this file (scripts/method-costs.tsv, which make reproduce orders its queue by)")
	dataDir := fs.String("data", "", "with --methods: directory holding datasets")
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
	isas, restore, err := bench.UseKernels(*kernels)
	defer restore()
	if err != nil {
		return benchErr(err)
	}
	if fs.Changed("methods") {
		sel := *methods
		if len(sel) == 1 && sel[0] == "all" {
			sel = nil
		}
		rn := *rounds
		if !fs.Changed("rounds") {
			rn = 1
		}
		costs, err := bench.Methods(backend, bench.MethodsOptions{Methods: sel, Rounds: rn, Eval: *eval, ProfileDir: *profileDir, Data: *dataDir}, stdout, stderr)
		if err == nil && *costsFile != "" {
			err = bench.WriteCosts(*costsFile, costs, *eval)
		}
		return benchErr(err)
	}
	if *round {
		lock := *lockstep
		if !fs.Changed("lockstep") {
			lock = train.LockstepDefault(backend)
		}
		opts := bench.RoundOptions{Setting: *setting, Rounds: *rounds, Workers: *workers, FT: *ft, Lockstep: lock,
			Script: *torchScript, Python: *python, NoTorch: *noTorch, Kernels: isas}
		if *journal {
			return benchErr(bench.Journal(backend, opts, stdout, stderr))
		}
		return benchErr(bench.Round(backend, opts, stdout, stderr))
	}
	return benchErr(bench.Steps(backend, bench.StepOptions{Arch: *arch, Shapes: *shapes, Batch: *batch, Steps: *steps,
		Script: *torchScript, Python: *python, NoTorch: *noTorch, Oracle: *oracle, Kernels: isas}, stdout, stderr))
}

// benchErr ends bench with err's line: exit 2 for invalid options, else 1 (nil for nil).
func benchErr(err error) error {
	if err == nil {
		return nil
	}
	code := exitFailure
	if manifest.IsInvalid(err) {
		code = exitInvalid
	}
	return failf(code, "fedpipe %v", err)
}
