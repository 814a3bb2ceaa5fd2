package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fedpipe/fedpipe/gomlx/gemm"
	"github.com/fedpipe/fedpipe/model"
)

// The settings Round times.
const (
	// SettingFedOBP is FedOBP's Table 6: cnn4 on FMNIST, 10 of 100 Dir(0.1)-like clients a
	// round, beside the PyTorch reference round.
	SettingFedOBP = "fedobp-fmnist"
	// SettingFedSelect is FedSelect's Table 1: ResNet-18 on CIFAR-10, 10 clients of 100
	// samples, 3 epochs (no PyTorch reference, no fine-tuning).
	SettingFedSelect = "fedselect-cifar10"
)

// RoundOptions are what Round and Journal time.
type RoundOptions struct {
	// Setting is SettingFedOBP or SettingFedSelect.
	Setting string
	// Rounds are the rounds timed after a warm-up round; Workers the clients trained side by
	// side (0: GOMAXPROCS).
	Rounds, Workers int
	// FT also times the evaluation after fine-tuning; Lockstep trains a round's clients in
	// one compiled step.
	FT, Lockstep bool
	// Script is the PyTorch reference round ("": torch_round.py in ../shared/bench or
	// shared/bench, if present), run with Python unless NoTorch.
	Script, Python string
	NoTorch        bool
	// Kernels are the GEMM kernel ISAs timed one after another (gemm.SetKernelISA; none: the
	// one in use).
	Kernels []string
}

// roundSetting is the round configuration of a setting, its name as printed, and the shape
// of one of its table cells: its rounds and how often it evaluates.
func roundSetting(setting string) (cfg RoundConfig, name string, cellRounds, cellEvalEvery int, err error) {
	// A cell: Table 6 of FedOBP has 400 rounds and an evaluation (before and after
	// fine-tuning) every 100; Table 1 of FedSelect 200 rounds and one at the end.
	switch setting {
	case SettingFedOBP:
		return DefaultRoundConfig(), "FedOBP-FMNIST (Table 6)", 400, 100, nil
	case SettingFedSelect:
		return FedSelectRoundConfig(), "FedSelect-CIFAR-10 (Table 1)", 200, 200, nil
	}
	return RoundConfig{}, "", 0, 0, invalidf("bench: --setting %q: use %s or %s", setting, SettingFedOBP, SettingFedSelect)
}

// Round times one federated round of a published setting and one evaluation of every
// client, with and without fine-tuning (TimeRound); for FedOBP's FMNIST setting it
// then runs the PyTorch reference script on the same work in the same invocation. It prints
// the figures, their ratios, the projected wall time of a table cell and fedpipe's peak RSS.
func Round(backend string, o RoundOptions, stdout, stderr io.Writer) error {
	cfg, name, cellRounds, cellEvalEvery, err := roundSetting(o.Setting)
	if err != nil {
		return err
	}
	if o.Setting == SettingFedSelect {
		o.NoTorch = true // the PyTorch reference is FedOBP's round
		o.FT = false
	}
	rounds, ft, script, python := o.Rounds, o.FT, o.Script, o.Python
	cfg.Rounds, cfg.Workers, cfg.Lockstep = rounds, o.Workers, o.Lockstep
	if !ft {
		cfg.FinetuneEpochs = 0
	}
	spec := cfg.Spec
	if spec.Arch == "" {
		spec = model.ModelSpec{Arch: model.ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	}
	fmt.Fprintf(stdout, "%s round: %s %s, %d of %d clients (%d training samples in all), %d local epochs, batch %d, SGD lr %g momentum %g; backend %s\n",
		name, spec.Arch, shapeString(spec.InputShape), cfg.Participants, cfg.Clients, cfg.TrainSamples, cfg.Epochs, cfg.Batch, cfg.Opt.LR, cfg.Opt.Momentum, model.BackendID(backend))
	kernels := o.Kernels
	if len(kernels) == 0 {
		kernels = []string{gemm.KernelISA()}
	}
	fmt.Fprintf(stdout, "GEMM kernel (fpfast backend; the kernels compute the same bits) timed in order: %s\n", strings.Join(kernelOrder(kernels), ", "))
	fmt.Fprintf(stdout, "load before: %s\n", loadAvg())
	start := time.Now()
	all := make([]RoundResult, len(kernels))
	for i, isa := range kernelOrder(kernels) {
		if err := gemm.SetKernelISA(isa); err != nil {
			return invalidf("bench --round: %v", err)
		}
		r, err := TimeRound(backend, cfg)
		if err != nil {
			return fmt.Errorf("bench --round: %v", err)
		}
		if len(kernels) > 1 {
			fmt.Fprintf(stdout, "kernel %s: %.2f s/round, %.0f training samples/s (load now %s)\n", isa, r.RoundSeconds, r.TrainSamplesPerSec(), loadAvg())
		}
		k := slices.Index(kernels, isa)
		if i < len(kernels) {
			all[k] = r
		} else { // the second, mirrored pass: the mean of both
			all[k].RoundSeconds = (all[k].RoundSeconds + r.RoundSeconds) / 2
			all[k].EvalSeconds = (all[k].EvalSeconds + r.EvalSeconds) / 2
			all[k].EvalFTSeconds = (all[k].EvalFTSeconds + r.EvalFTSeconds) / 2
		}
	}
	res := all[0]
	ours := time.Since(start)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // Maxrss in KiB on Linux; children excluded
	if script == "" {
		for _, p := range []string{"../shared/bench/torch_round.py", "shared/bench/torch_round.py"} {
			if _, err := os.Stat(p); err == nil {
				script = p
				break
			}
		}
	}
	var ref map[string]float64
	if !o.NoTorch && script != "" {
		args := []string{"--threads", "2", "--rounds", strconv.Itoa(rounds)}
		if ft {
			args = append(args, "--ft")
		}
		var err error
		if ref, err = runScript(python, script, args, stderr); err != nil {
			fmt.Fprintf(stderr, "fedpipe bench --round: PyTorch reference unavailable: %v\n", err)
		}
	}
	fmt.Fprintf(stdout, "%-34s %12s %12s %10s\n", "", "fedpipe", "pytorch", "speed-up")
	if len(kernels) > 1 {
		fmt.Fprintf(stdout, "(fedpipe: kernel %s, the mean of its two passes)\n", kernels[0])
	}
	row := func(name string, ours float64, key string, higherBetter bool) {
		theirs, ratio := "-", "-"
		if v, ok := ref[key]; ok && v > 0 && ours > 0 {
			theirs = fmt.Sprintf("%.2f", v)
			if higherBetter {
				ratio = fmt.Sprintf("%.2fx", ours/v)
			} else {
				ratio = fmt.Sprintf("%.2fx", v/ours)
			}
		}
		fmt.Fprintf(stdout, "%-34s %12.2f %12s %10s\n", name, ours, theirs, ratio)
	}
	row("s/round", res.RoundSeconds, "torch_round_seconds", false)
	row("training samples/s", res.TrainSamplesPerSec(), "torch_round_train_samples_per_s", true)
	row(fmt.Sprintf("s/eval (%d clients)", cfg.Clients), res.EvalSeconds, "torch_eval_seconds", false)
	if ft {
		row(fmt.Sprintf("s/eval after %d fine-tuning epochs", cfg.FinetuneEpochs), res.EvalFTSeconds, "torch_eval_ft_seconds", false)
	}
	if res.LockstepSteps > 0 {
		fmt.Fprintf(stdout, "a run's round in lockstep: %.2f s (a step waits for the largest client: the %d timed take %d steps, "+
			"%d drawn at random from the %d clients as a run draws them %.0f on average)\n",
			res.DrawnRoundSeconds(), cfg.Participants, res.LockstepSteps, cfg.Participants, cfg.Clients, res.DrawnLockstepSteps)
	}
	// The projection is of a run: in lockstep, of rounds whose participants are drawn.
	cell := CellSeconds(res.DrawnRoundSeconds(), res.EvalSeconds, res.EvalFTSeconds, cellRounds, cellEvalEvery)
	line := fmt.Sprintf("projected cell (%d rounds, eval every %d%s): fedpipe %.2f h", cellRounds, cellEvalEvery,
		map[bool]string{true: " before and after fine-tuning", false: ", no fine-tuning"}[ft], cell/3600)
	if r, ok := ref["torch_round_seconds"]; ok {
		tc := CellSeconds(r, ref["torch_eval_seconds"], ref["torch_eval_ft_seconds"], cellRounds, cellEvalEvery)
		line += fmt.Sprintf(", pytorch %.2f h", tc/3600)
	}
	fmt.Fprintln(stdout, line)
	if strings.Contains(model.BackendID(backend), "/fpfast@") {
		fmt.Fprintln(stdout, fmaLine(spec, res, kernels[0]))
	}
	for i, isa := range kernels[1:] {
		r := all[i+1]
		line := fmt.Sprintf("kernel %s (mean of two passes): %.2f s/round, %.0f training samples/s; %s is %.2fx that", isa, r.RoundSeconds, r.TrainSamplesPerSec(),
			kernels[0], res.TrainSamplesPerSec()/r.TrainSamplesPerSec())
		if v, ok := ref["torch_round_train_samples_per_s"]; ok && v > 0 {
			line += fmt.Sprintf("; %s is %.2fx pytorch", isa, r.TrainSamplesPerSec()/v)
		}
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "fedpipe peak RSS %.0f MiB (getrusage maxrss; fedpipe's part took %.0f s)\n", float64(ru.Maxrss)/1024, ours.Seconds())
	if res.Lockstep > 0 {
		fmt.Fprintf(stdout, "clients per lockstep step: up to %d; graphs compiled: %s\n", res.Lockstep, compilations(res.Compilations))
	} else {
		fmt.Fprintf(stdout, "clients side by side: %d; graphs compiled: %s\n", res.Workers, compilations(res.Compilations))
	}
	if res.NoLockstep != "" {
		fmt.Fprintf(stdout, "no lockstep: %s; its clients trained as a run trains them\n", res.NoLockstep)
	}
	fmt.Fprintf(stdout, "load after: %s (figures are valid only on an otherwise idle machine)\n", loadAvg())
	return nil
}

// kernelOrder is the order in which bench times the GEMM kernels: one kernel once; several
// in the order given and then in reverse (a, b, b, a), so that neither gains from running
// later in the process (warm caches and heap) or loses to a passing load, and each figure is
// the mean of two passes.
func kernelOrder(kernels []string) []string {
	if len(kernels) < 2 {
		return kernels
	}
	order := slices.Clone(kernels)
	for i := len(kernels) - 1; i >= 0; i-- {
		order = append(order, kernels[i])
	}
	return order
}

// compilations formats Model.Compilations in a fixed order.
func compilations(c map[string]int) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, c[k])
	}
	return strings.Join(parts, ", ")
}

// loadAvg returns the 1-, 5- and 15-minute load averages, or "unknown".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// runScript runs a reference script and parses its "name value" lines.
func runScript(python, script string, args []string, stderr io.Writer) (map[string]float64, error) {
	abs, _ := filepath.Abs(script)
	cmd := exec.Command(python, append([]string{abs}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w (install with: apt-get install python3-torch)", python, abs, err)
	}
	res := map[string]float64{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 {
			if v, err := strconv.ParseFloat(f[1], 64); err == nil {
				res[f[0]] = v
			}
		}
	}
	return res, nil
}

// shapeString writes an input shape as HxWxC.
func shapeString(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	return strings.Join(parts, "x")
}

// fmaLine measures the FMA throughput loop (gemm.FMAPeak) for a second on as many threads as
// the round's clients trained side by side, with the kernels of isa, and holds the round's
// training rate against it: samples/s × the products' FLOPs per sample (ModelSpec.TrainFLOPs).
func fmaLine(spec model.ModelSpec, res RoundResult, isa string) string {
	threads := res.Workers
	if threads < 1 {
		threads = runtime.GOMAXPROCS(0)
	}
	if err := gemm.SetKernelISA(isa); err != nil {
		return fmt.Sprintf("FMA loop: not measured (%v)", err)
	}
	flops, err := spec.TrainFLOPs()
	if err != nil {
		return fmt.Sprintf("FMA loop: not measured (%v)", err)
	}
	peak, loop := gemm.FMAPeak(threads, time.Second)
	if peak <= 0 {
		return "FMA loop: none on this CPU (no AVX2 and FMA)"
	}
	train := res.TrainSamplesPerSec() * float64(flops) / 1e9
	return fmt.Sprintf("FMA loop (%s, %d threads, measured now for 1 s): %.0f GFLOP/s; training %.0f GFLOP/s (%.0f samples/s x %.1f MFLOP of products a sample) = %.0f%% of it",
		loop, threads, peak, train, res.TrainSamplesPerSec(), float64(flops)/1e6, 100*train/peak)
}
