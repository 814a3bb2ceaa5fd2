package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/train"
)

// MethodSettings are the published settings `bench --methods` times each method on: FedOBP
// Table 6 FMNIST Dir(0.1) (cnn4) for that table's methods, DM-PFL Table 7 MNIST Dir(0.1)
// (fedavgcnn) for its own; each manifest's FedAvg run (fedavg, fedavg-ft) is the reference
// its other methods' multiples are taken against.
var MethodSettings = []string{"manifests/fedobp-table6-fmnist-dir01.yaml", "manifests/dmpfl-table7-dir01.yaml"}

// MethodsOptions are what Methods times.
type MethodsOptions struct {
	// Manifests are the settings (default MethodSettings, relative to the repository root).
	Manifests []string
	// Methods selects runs by label or method name (none: every run of each setting); the
	// setting's FedAvg run is always timed, first, as the reference.
	Methods []string
	// Rounds are the rounds timed per method (at least 1; the first compiles the graphs and
	// is left out of the mean when there are more).
	Rounds int
	// Eval also times one evaluation of every client (with the manifest's fine-tuning)
	// after the timed rounds.
	Eval bool
	// ProfileDir, when set, receives a Go CPU profile per method (SETTING-LABEL.pprof).
	ProfileDir string
	// Data is the datasets' directory ("": the default).
	Data string
}

// MethodCost is one method's measured round (and evaluation) beside its implied multiple.
type MethodCost struct {
	Setting, Label, Method string
	// RoundWall and RoundCPU are seconds a timed round (wall and process CPU: user + system).
	RoundWall, RoundCPU float64
	// EvalWall and EvalCPU are seconds an evaluation of every client (0: not timed).
	EvalWall, EvalCPU float64
	// Implied is the multiple the method's algorithm implies over the timed rounds, Cell
	// over a whole cell's (rounds 1 to train.rounds; they differ where a client's work
	// grows once it has trained, as FedSelect's); Declared is false where it declares none.
	Implied, Cell manifest.ImpliedCost
	Declared      bool
	// Stages are the CPU seconds a timed round spent by stage, from a Go CPU profile of the
	// timed rounds (stageOf: GEMM, the other graph ops, the method's Go code, the train
	// loop, the model's copies, GC and allocation, other).
	Stages map[string]float64
}

// cpuSeconds is the process's user + system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// errTimed stops a timed run after its last timed round.
var errTimed = errors.New("bench: timed rounds done")

// timeRun trains run for o.Rounds rounds (and, with o.Eval, one more that evaluates every
// client), timing each round's wall and CPU seconds and recording the graph ops' times.
func timeRun(backend string, r manifest.Run, ds *data.Dataset, a *partition.Assignment, o MethodsOptions, profile string) (MethodCost, error) {
	label, _, _ := strings.Cut(r.Label(), " seed=")
	c := MethodCost{Label: label, Method: r.Method}
	// Timed training rounds: 2..o.Rounds when there are several (round 1 compiles), else 1.
	first := 1
	if o.Rounds > 1 {
		first = 2
	}
	of := manifest.RunCost(r)
	of.From, of.To = first, o.Rounds
	c.Implied, c.Declared = manifest.MethodCost(r.Method, of)
	c.Cell, _ = manifest.MethodCost(r.Method, manifest.RunCost(r))
	rounds := o.Rounds
	run := r
	run.Train.EvalEvery = 0
	if o.Eval {
		// Evaluate in round rounds+1 alone: it times as a training round plus the evaluation.
		run.Train.EvalEvery = rounds + 1
		rounds++
	}
	if run.Train.Rounds < rounds {
		run.Train.Rounds = rounds
	}
	type mark struct{ wall, cpu float64 }
	marks := []mark{{0, cpuSeconds()}}
	start := time.Now()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	// The CPU profile covers the timed training rounds: all of them after the first (which
	// compiles), or the one.
	var prof bytes.Buffer
	profiling := false
	startProfile := func() {
		profiling = pprof.StartCPUProfile(&prof) == nil
	}
	stopProfile := func() {
		if profiling {
			pprof.StopCPUProfile()
			profiling = false
		}
	}
	defer stopProfile()
	if o.Rounds == 1 {
		startProfile()
	}
	cfg := train.Config{Run: &run, Data: ds, Assign: a, Backend: backend, Lockstep: train.LockstepDefault(backend),
		Progress: func(round, _ int, _ string) {
			marks = append(marks, mark{time.Since(start).Seconds(), cpuSeconds()})
			if round == o.Rounds {
				stopProfile()
			} else if round == 1 {
				startProfile()
			}
			if round == rounds {
				cancel(errTimed)
			}
		}}
	_, err := train.Run(ctx, cfg)
	stopProfile()
	if err != nil && !errors.Is(context.Cause(ctx), errTimed) {
		return c, err
	}
	if len(marks) < rounds+1 {
		return c, fmt.Errorf("bench --methods: %s ran %d of %d rounds", r.Label(), len(marks)-1, rounds)
	}
	n := float64(o.Rounds - first + 1)
	c.RoundWall = (marks[o.Rounds].wall - marks[first-1].wall) / n
	c.RoundCPU = (marks[o.Rounds].cpu - marks[first-1].cpu) / n
	if o.Eval {
		last := marks[rounds]
		prev := marks[rounds-1]
		c.EvalWall = max(0, last.wall-prev.wall-c.RoundWall)
		c.EvalCPU = max(0, last.cpu-prev.cpu-c.RoundCPU)
	}
	if profile != "" && prof.Len() > 0 {
		if err := os.WriteFile(profile, prof.Bytes(), 0o644); err != nil {
			return c, err
		}
	}
	if prof.Len() > 0 {
		stages, err := profileStageSeconds(prof.Bytes())
		if err != nil {
			return c, err
		}
		c.Stages = map[string]float64{}
		for k, v := range stages {
			c.Stages[k] = v / n
		}
	}
	return c, nil
}

// Methods times, in one invocation, one paper-scale round (o.Rounds of them) of each
// selected method on its published setting, and prints per method the seconds a round
// (wall and CPU), its multiple of the setting's FedAvg (in CPU seconds, which a passing
// load disturbs less than wall time), the multiple its algorithm implies
// (manifest.MethodDef.Cost) and the ratio of the two, and where the round's CPU went: the
// graph ops by class (GEMM, gathers and scatters, elementwise, reductions, copies) and
// what ran outside them (the method's Go code, the loop, garbage collection).
func Methods(backend string, o MethodsOptions, stdout, stderr io.Writer) ([]MethodCost, error) {
	if o.Rounds < 1 {
		return nil, invalidf("bench --methods: --rounds must be at least 1")
	}
	settings := o.Manifests
	if len(settings) == 0 {
		settings = MethodSettings
	}
	if o.ProfileDir != "" {
		if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(stdout, "bench --methods: %d round(s) a method%s; backend %s; load before: %s\n", o.Rounds,
		map[bool]string{true: " and one evaluation of every client", false: ""}[o.Eval], model.BackendID(backend), loadAvg())
	var all []MethodCost
	loader := &data.Loader{DataDir: o.Data}
	matched := map[string]bool{}
	for _, path := range settings {
		m, err := manifest.LoadManifest(path)
		if err != nil {
			return all, invalidf("bench --methods: %v", err)
		}
		runs, err := m.Expand()
		if err != nil {
			return all, invalidf("bench --methods: %v", err)
		}
		var sel []manifest.Run
		var ref *manifest.Run
		for i, r := range runs {
			if r.Seed != runs[0].Seed {
				continue
			}
			if r.Method == "fedavg" && ref == nil {
				ref = &runs[i]
			}
			// r.MethodName is the manifest's label (fedavg-ft); r.Label() adds the seed.
			if len(o.Methods) == 0 || slices.Contains(o.Methods, r.MethodName) || slices.Contains(o.Methods, r.Method) {
				matched[r.MethodName], matched[r.Method] = true, true
				if &runs[i] != ref {
					sel = append(sel, r)
				}
			}
		}
		if len(sel) == 0 && (ref == nil || len(o.Methods) > 0 && !matched[ref.MethodName]) {
			continue
		}
		if ref != nil {
			sel = append([]manifest.Run{*ref}, sel...)
		}
		ds, err := loader.Load(sel[0].Dataset)
		if err != nil {
			return all, fmt.Errorf("bench --methods: %s: %v", path, err)
		}
		a, err := partition.Make(ds, sel[0].Dataset, sel[0].Partition, sel[0].PartitionSeed())
		if err != nil {
			return all, fmt.Errorf("bench --methods: %s: %v", path, err)
		}
		fmt.Fprintf(stdout, "\n%s (%s, %s, %d clients, participation %g, %d local epochs, batch %d):\n", m.Name, sel[0].Model.Arch, ds.Name,
			a.Clients(), sel[0].Train.Participation, sel[0].Train.LocalEpochs, sel[0].Train.BatchSize)
		header(stdout, o.Eval)
		var base MethodCost
		for i, r := range sel {
			profile := ""
			if o.ProfileDir != "" {
				profile = filepath.Join(o.ProfileDir, m.Name+"-"+strings.ReplaceAll(r.Label(), " ", "_")+".pprof")
			}
			fmt.Fprintf(stderr, "bench --methods: %s %s (load %s)\n", m.Name, r.Label(), loadAvg())
			c, err := timeRun(backend, r, ds, a, o, profile)
			if err != nil {
				return all, fmt.Errorf("bench --methods: %s %s: %w", m.Name, r.Label(), err)
			}
			c.Setting = m.Name
			if i == 0 {
				base = c
			}
			all = append(all, c)
			printCost(stdout, c, base, o.Eval)
		}
	}
	for _, want := range o.Methods {
		if !matched[want] {
			fmt.Fprintf(stderr, "bench --methods: no run labelled or of method %q in %s\n", want, strings.Join(settings, ", "))
		}
	}
	if len(all) == 0 {
		return nil, invalidf("bench --methods: no run of %s in %s", strings.Join(o.Methods, ", "), strings.Join(settings, ", "))
	}
	fmt.Fprintf(stdout, "\nx FedAvg: CPU seconds a round over the setting's FedAvg's; implied: the multiple the method's algorithm implies over the timed rounds (manifest.MethodDef.Cost); "+
		"of implied: the first over the second (1.3 is the issue's bound); cell: the implied multiple over a whole cell's rounds, where a client's work grows once it has trained (FedSelect). profile: a timed round's CPU samples by stage (GEMM kernels, the other graph ops, the method's own Go code, the train loop, the model's parameter copies, GC and allocation).\n")
	fmt.Fprintf(stdout, "load after: %s (compare figures of one invocation only)\n", loadAvg())
	return all, nil
}

func header(w io.Writer, eval bool) {
	fmt.Fprintf(w, "%-14s %8s %8s %8s %8s %8s %8s", "method", "s/round", "cpu-s", "x FedAvg", "implied", "of impl.", "cell")
	if eval {
		fmt.Fprintf(w, " %8s %8s", "s/eval", "x FedAvg")
	}
	fmt.Fprintf(w, "  %s\n", "a round's CPU profile by stage")
}

// printCost prints one method's row against the setting's reference base.
func printCost(w io.Writer, c, base MethodCost, eval bool) {
	mult := c.RoundCPU / base.RoundCPU
	implied, of, cell := "?", "?", "?"
	if c.Declared {
		implied = fmt.Sprintf("%.2f", c.Implied.Multiple)
		of = fmt.Sprintf("%.2f", mult/c.Implied.Multiple)
		cell = fmt.Sprintf("%.2f", c.Cell.Multiple)
	}
	fmt.Fprintf(w, "%-14s %8.2f %8.2f %8.2f %8s %8s %8s", c.Label, c.RoundWall, c.RoundCPU, mult, implied, of, cell)
	if eval {
		fmt.Fprintf(w, " %8.2f %8.2f", c.EvalWall, c.EvalCPU/max(base.EvalCPU, 1e-9))
	}
	var parts []string
	total := 0.0
	for _, v := range c.Stages {
		total += v
	}
	for _, k := range profileStages {
		if v := c.Stages[k]; v > 0 && total > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*v/total))
		}
	}
	fmt.Fprintf(w, "  %s\n", strings.Join(parts, ", "))
}

// WriteCosts writes costs as the tab-separated table scripts/reproduce.sh projects a cell's
// time from: a comment header, then per method its setting (the manifest's name up to its
// first "-": fedobp, dmpfl), label, method, CPU seconds a round and CPU seconds an
// evaluation of every client (0 when not timed: eval false), then the implied multiple of
// the timed rounds and that of a whole cell, whose ratio scales the timed round to a
// cell's mean round.
func WriteCosts(path string, costs []MethodCost, eval bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# fedpipe bench --methods%s: CPU seconds a paper-scale round (and an evaluation of every client) per method; load %s\n",
		map[bool]string{true: " --eval", false: ""}[eval], loadAvg())
	fmt.Fprintf(&b, "# setting\tlabel\tmethod\tcpu_s_round\tcpu_s_eval\timplied\tcell_implied\n")
	for _, c := range costs {
		setting, _, _ := strings.Cut(c.Setting, "-")
		label, _, _ := strings.Cut(c.Label, " ")
		fmt.Fprintf(&b, "%s\t%s\t%s\t%.2f\t%.2f\t%.3f\t%.3f\n", setting, label, c.Method, c.RoundCPU, c.EvalCPU, c.Implied.Multiple, c.Cell.Multiple)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
