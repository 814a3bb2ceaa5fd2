package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/bench"
	"github.com/fedpipe/fedpipe/gomlx/gemm"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// cmdBench measures a model's training and inference throughput, or one federated round,
// on our backend and, in the same invocation, PyTorch's on the same work, and prints both
// with their ratio (package bench).
var cmdBench = &command{
	name:      "bench",
	overview:  []string{"bench [flags]             training/inference throughput of the CNN vs PyTorch"},
	usageLine: "fedpipe bench [flags]",
	long:      "Measures a model's (default cnn4) training (SGD with momentum) and inference (batch 256) samples/s on the GoMLX backend,\nthen runs the PyTorch reference on the same shapes and prints the ratios.",
	flags:     withFlags(benchCmd),
}

// benchFlags are bench's flags.
type benchFlags struct {
	backend, arch, torchScript, python, setting, profileDir, costsFile, dataDir string
	shapes, kernels, methods                                                    []string
	batch, steps, rounds, workers                                               int
	noTorch, oracle, round, ft, journal, lockstep, eval                         bool
}

func (f *benchFlags) declare(fs *pflag.FlagSet, _ flagGroup) {
	fs.StringVar(&f.backend, "backend", "", "GoMLX backend (default $GOMLX_BACKEND, else the built-in CPU backend)")
	fs.StringVar(&f.arch, "arch", model.ArchCNN4, "model to measure: cnn4, fedavgcnn, resnet18, resnet18_imagenet (the PyTorch reference covers cnn4 only)")
	fs.StringSliceVar(&f.shapes, "shape", []string{"28x28x1", "32x32x3"}, "input shapes HxWxC to measure")
	fs.IntVar(&f.batch, "batch", 32, "training batch size")
	fs.IntVar(&f.steps, "steps", 60, "training steps measured per shape")
	fs.StringVar(&f.torchScript, "torch", "", "PyTorch reference script (default ../shared/bench/torch_cnn4.py, with --round torch_round.py, if present)")
	fs.StringVar(&f.python, "python", "/usr/bin/python3", "Python with torch (Debian python3-torch)")
	fs.BoolVar(&f.noTorch, "no-torch", false, "skip the PyTorch reference")
	fs.BoolVar(&f.oracle, "oracle", false, "also measure the reference backend ("+model.OracleBackend+") and print the speed-up over it")
	fs.BoolVar(&f.round, "round", false, "time one FL round of the FedOBP-FMNIST setting and one evaluation of 100 clients beside ../shared/bench/torch_round.py")
	fs.IntVar(&f.rounds, "rounds", 2, "with --round: rounds timed after a warm-up round; with --methods: rounds a method (default 1; with several the first, which compiles, is left out)")
	fs.IntVar(&f.workers, "clients-at-once", 0, "with --round: clients trained (and evaluated) side by side, each on one core (0: GOMAXPROCS; 1: one after another, each op on every core)")
	fs.BoolVar(&f.ft, "ft", true, "with --round: also time the evaluation after 5 fine-tuning epochs per client (minutes)")
	fs.StringVar(&f.setting, "setting", bench.SettingFedOBP, "with --round: "+bench.SettingFedOBP+" (FedOBP Table 6: cnn4, 10 of 100 Dir(0.1)-like clients; PyTorch reference) or "+
		bench.SettingFedSelect+" (FedSelect Table 1: ResNet-18, 10 clients of 100 samples, 3 epochs)")
	fs.BoolVar(&f.journal, "journal", false, "with --round: time the rounds without and with the progress journal a train stage publishes after each round (fedpipe serve, status --watch), alternately in one invocation, and print the difference")
	fs.BoolVar(&f.lockstep, "lockstep", false, "with --round: train a round's clients in one compiled step (MultiSession), as runs on XLA do (default: on for xla backends)")
	fs.StringSliceVar(&f.kernels, "kernel", nil, "GEMM kernel ISAs of the fpfast backend to time in this invocation, e.g. avx512,avx2 (default: the one in use; available here: "+
		strings.Join(gemm.KernelISAs(), ",")+"); several are timed twice, in the order given and then reversed, and each figure is the mean of its two passes; they compute the same bits")
	fs.StringSliceVar(&f.methods, "methods", nil, "time one paper-scale round of each method on its published setting (FedOBP Table 6 FMNIST Dir(0.1); DM-PFL Table 7 MNIST) beside FedAvg's, with the multiple its algorithm implies and where the round's CPU goes; e.g. --methods fedavg,apfl (labels or method names; all: every one)")
	fs.BoolVar(&f.eval, "eval", false, "with --methods: also time one evaluation of every client (with the manifest's fine-tuning) after the rounds")
	fs.StringVar(&f.profileDir, "profile-dir", "", "with --methods: write a Go CPU profile of each method's rounds here (go tool pprof)")
	fs.StringVar(&f.costsFile, "costs", "", "with --methods: also write the figures as a tab-separated table to this file (scripts/method-costs.tsv, which make reproduce orders its queue by)")
	fs.StringVar(&f.dataDir, "data", "", "with --methods: directory holding datasets")
}

// benchCmd is `fedpipe bench`.
func benchCmd(c *call, f *benchFlags, _ []string) error {
	stdout, stderr := c.stdout, c.stderr
	backend, err := model.ResolveBackend(f.backend)
	if err != nil {
		return failf(exitInvalid, "fedpipe bench: %v", err)
	}
	isas, restore, err := bench.UseKernels(f.kernels)
	defer restore()
	if err != nil {
		return benchErr(err)
	}
	if c.fs.Changed("methods") {
		sel := f.methods
		if len(sel) == 1 && sel[0] == "all" {
			sel = nil
		}
		rn := f.rounds
		if !c.fs.Changed("rounds") {
			rn = 1
		}
		costs, err := bench.Methods(backend, bench.MethodsOptions{Methods: sel, Rounds: rn, Eval: f.eval, ProfileDir: f.profileDir, Data: f.dataDir}, stdout, stderr)
		if err == nil && f.costsFile != "" {
			err = bench.WriteCosts(f.costsFile, costs, f.eval)
		}
		return benchErr(err)
	}
	if f.round {
		lock := f.lockstep
		if !c.fs.Changed("lockstep") {
			lock = train.LockstepDefault(backend)
		}
		opts := bench.RoundOptions{Setting: f.setting, Rounds: f.rounds, Workers: f.workers, FT: f.ft, Lockstep: lock,
			Script: f.torchScript, Python: f.python, NoTorch: f.noTorch, Kernels: isas}
		if f.journal {
			return benchErr(bench.Journal(backend, opts, stdout, stderr))
		}
		return benchErr(bench.Round(backend, opts, stdout, stderr))
	}
	return benchErr(bench.Steps(backend, bench.StepOptions{Arch: f.arch, Shapes: f.shapes, Batch: f.batch, Steps: f.steps,
		Script: f.torchScript, Python: f.python, NoTorch: f.noTorch, Oracle: f.oracle, Kernels: isas}, stdout, stderr))
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
