package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/manifest"
)

// Outputs are a stage's results by name, as bytes to store.
type Outputs map[string][]byte

// StageFunc runs one stage. It must be a pure function of the context's node and inputs.
type StageFunc func(ctx context.Context, sc *StageContext) (Outputs, error)

// States a stage can be in, as reported by plans and runs.
const (
	StateCached = "cached" // outputs found in the store; nothing ran
	StateRun    = "run"    // planned to run
	StateRan    = "ran"    // ran in this invocation
)

// StageFuncs adapts stage implementations written against their own context interface C
// to StageFunc, so that stage packages need not import pipeline. *StageContext must
// implement C; a stage called with a context that does not is an error, not a panic.
func StageFuncs[C any, F ~func(context.Context, C) (map[string][]byte, error)](fs map[string]F) map[string]StageFunc {
	out := make(map[string]StageFunc, len(fs))
	for kind, f := range fs {
		out[kind] = func(ctx context.Context, sc *StageContext) (Outputs, error) {
			c, ok := any(sc).(C)
			if !ok {
				return nil, fmt.Errorf("stage kind %s: *StageContext does not implement %T", kind, (*C)(nil))
			}
			return f(ctx, c)
		}
	}
	return out
}

// PlanEntry says whether a stage will run and why.
type PlanEntry struct {
	Node   *Node
	State  string // StateCached or StateRun
	Reason string
	// NeverRan is set when the stage misses and never ran from this manifest (Reason
	// starts with ReasonNeverRan, and may add where a train stage resumes).
	NeverRan bool
	action   artifacts.Action
}

// Plan looks every node's key up in the action cache. A node whose outputs are missing or
// fail verification is planned to run, with the reason; so is everything downstream of a
// node that runs only if its own key misses (keys do not depend on output bytes).
func Plan(g *Graph, store *artifacts.Store, logs *LogCapture) ([]PlanEntry, error) {
	plan := make([]PlanEntry, len(g.Nodes))
	for i, n := range g.Nodes {
		logs.Reset()
		a, ok, err := store.GetAction(artifacts.Digest(n.Key))
		if err != nil {
			return nil, err
		}
		plan[i] = PlanEntry{Node: n, State: StateCached, action: a}
		if ok {
			continue
		}
		plan[i].State = StateRun
		reason := missReason(g, n, store, logs.Take())
		plan[i].NeverRan = reason == ReasonNeverRan
		plan[i].Reason = reason + resumeNote(store, n)
	}
	return plan, nil
}

// ReasonNeverRan is the reason of a stage that misses and never ran from this manifest.
const ReasonNeverRan = "never ran"

// missReason explains a cache miss: failed verification, or what changed since the stage
// of the same name last ran from this manifest, or that it never ran.
func missReason(g *Graph, n *Node, store *artifacts.Store, logged []string) string {
	if len(logged) > 0 {
		return "cached outputs failed verification (" + strings.Join(logged, "; ") + ")"
	}
	d, ok, err := store.GetRef(lastRef(g, n))
	if err != nil || !ok {
		return ReasonNeverRan
	}
	old, err := store.Get(d)
	if err != nil {
		return "no cache entry"
	}
	diff := DiffDescriptors(old, n.desc)
	if len(diff) == 0 {
		return "no cache entry (outputs were removed)"
	}
	return strings.Join(diff, ", ")
}

// StageResult reports what happened to one stage in a run.
type StageResult struct {
	Kind    string  `json:"kind"`
	Name    string  `json:"name"`
	Key     string  `json:"key"`
	State   string  `json:"state"`
	Reason  string  `json:"reason,omitempty"`
	Seconds float64 `json:"seconds"`
	// Outputs maps output names to their digests.
	Outputs map[string]string `json:"outputs,omitempty"`
	// ResumedFrom is the round a train stage resumed after (0: it started afresh).
	ResumedFrom int `json:"resumed_from,omitempty"`
	// Provenance is where and how a stage that ran in this invocation was computed, as
	// recorded with its result (nil for cached stages).
	Provenance *Provenance `json:"provenance,omitempty"`
}

// Executor runs a plan against a store.
type Executor struct {
	Store    *artifacts.Store
	Stages   map[string]StageFunc
	Progress Progress
	// Remote, if set, is consulted before a stage runs and receives what ran (remote.go).
	Remote *remote.Remote
	// Split, if set, shares the plan with other processes (worker.go).
	Split *Split
	// Build describes the binary, for the provenance recorded with each result.
	Build BuildInfo
	// ReleaseAfter: once a stage that ran at least this long has stored its outputs, the
	// heap it left behind is returned to the system (see releaseMemory); 0 means
	// DefaultReleaseAfter, a negative value never.
	ReleaseAfter time.Duration
	// NoJournal turns off the progress journals train stages publish while they run
	// (live.go); results are the same either way.
	NoJournal bool
	// Together, when > 1, runs up to that many stages at the same time, each once its
	// inputs are done (together.go); results are the same either way. A split run
	// (Split) runs one stage at a time.
	Together int

	mu     sync.Mutex
	redone []StageResult // partial inputs recomputed during this Execute (partial.go)
}

// Execute runs the planned stages in order. Each stage's outputs are stored before its
// action-cache entry is written, so an interrupted run never leaves a result that looks
// complete. It stops at the first failure.
//
// A stage about to run whose input's result is partial (kept without its models) first
// recomputes that input (partial.go); the input's entry in the results then says it ran.
func (e *Executor) Execute(ctx context.Context, g *Graph, plan []PlanEntry) ([]StageResult, error) {
	var results []StageResult
	var err error
	if e.Split != nil {
		results, err = e.executeSplit(ctx, g, plan)
	} else if e.Together > 1 {
		results, err = e.executeTogether(ctx, plan, g)
	} else {
		results, err = e.execute(ctx, plan, g)
	}
	return e.patchRedone(results), err
}

// execute is Execute in one process.
func (e *Executor) execute(ctx context.Context, plan []PlanEntry, g *Graph) ([]StageResult, error) {
	actions := map[*Node]artifacts.Action{}
	results := make([]StageResult, 0, len(plan))
	toRun := 0
	for _, p := range plan {
		if p.State != StateCached {
			toRun++
		}
	}
	done := 0
	for _, p := range plan {
		n := p.Node
		if p.State == StateCached {
			actions[n] = p.action
			results = append(results, StageResult{Kind: n.Kind, Name: n.Name, Key: n.Key.String(), State: StateCached,
				Outputs: digestStrings(p.action.Outputs)})
			continue
		}
		done++
		if err := ctx.Err(); err != nil {
			return results, err
		}
		reason := p.Reason
		if res, ok, err := e.fetch(ctx, n, actions, &reason); err != nil || ok {
			if err != nil {
				return results, err
			}
			results = append(results, res)
			continue
		}
		res, err := e.runStage(ctx, g, n, reason, actions, done, toRun)
		if err != nil {
			return results, err
		}
		results = append(results, res)
	}
	return results, nil
}

// runStage runs node n, whose inputs' actions are in actions, stores its outputs and then
// its action entry (and pushes both to the remote, if any), and adds its action to actions.
func (e *Executor) runStage(ctx context.Context, g *Graph, n *Node, reason string, actions map[*Node]artifacts.Action, index, total int) (StageResult, error) {
	pub := e.startJournal(ctx, n) // a train stage's progress journal (live.go); nil otherwise
	res, err := e.runStageWith(ctx, g, n, reason, actions, index, total, pub)
	pub.End(err)
	return res, err
}

// runStageWith is runStage, publishing the stage's progress to pub (nil: none).
func (e *Executor) runStageWith(ctx context.Context, g *Graph, n *Node, reason string, actions map[*Node]artifacts.Action, index, total int, pub *live.Publisher) (StageResult, error) {
	res := StageResult{Kind: n.Kind, Name: n.Name, Key: n.Key.String()}
	fn, ok := e.Stages[n.Kind]
	if !ok {
		return res, fmt.Errorf("no implementation for stage kind %q", n.Kind)
	}
	if err := e.completeInputs(ctx, g, n, actions, index, total); err != nil {
		return res, err
	}
	start := time.Now()
	sc := &StageContext{Node: n, graph: g, store: e.Store, actions: actions, progress: e.Progress,
		index: index, total: total, ctx: ctx, remote: e.Remote, live: pub, build: e.Build, start: start}
	e.Progress.StageStart(index, total, n.Name)
	outs, err := fn(ctx, sc)
	if err != nil {
		e.Progress.StageEnd(n.Name, time.Since(start), err)
		return res, fmt.Errorf("stage %s: %w", n.Name, err)
	}
	prov := e.Build.provenance(time.Since(start))
	if sc.resumedFrom > 0 && sc.lastDone > sc.resumedFrom {
		prov.Segments = sc.history(sc.lastDone)
	}
	a := artifacts.Action{Outputs: map[string]artifacts.Digest{}, Meta: map[string]string{"kind": n.Kind, "name": n.Name}}
	prov.putMeta(a.Meta)
	for name, d := range sc.early {
		a.Outputs[name] = d
	}
	for _, name := range sortedKeys(outs) {
		if _, dup := a.Outputs[name]; dup {
			return res, fmt.Errorf("stage %s: output %s given twice (PutOutput and returned)", n.Name, name)
		}
		d, err := e.Store.Put(outs[name])
		if err != nil {
			return res, fmt.Errorf("stage %s: storing output %s: %w", n.Name, name, err)
		}
		a.Outputs[name] = d
	}
	if err := e.Store.PutAction(artifacts.Digest(n.Key), a); err != nil {
		return res, fmt.Errorf("stage %s: recording result: %w", n.Name, err)
	}
	// Remember this description so a later plan can say what changed.
	if dd, err := e.Store.Put(n.desc); err == nil {
		_ = e.Store.PutRef(lastRef(g, n), dd)
	}
	if err := e.push(ctx, n, a); err != nil {
		return res, fmt.Errorf("stage %s: %w", n.Name, err)
	}
	_ = e.Store.DeleteRef(checkpointRef(n))
	_ = recordExtension(e.Store, n) // a later, longer run may continue from this one
	secs := time.Since(start)
	e.Progress.StageEnd(n.Name, secs, nil)
	e.releaseMemory(secs)
	actions[n] = a
	res.State, res.Reason, res.Seconds, res.ResumedFrom = StateRan, reason, secs.Seconds(), sc.resumedFrom
	res.Outputs = digestStrings(a.Outputs)
	shown := prov
	shown.Seconds = prov.TotalSeconds() // over every part, as ls and the report show it
	res.Provenance = &shown
	return res, nil
}

func digestStrings(m map[string]artifacts.Digest) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v.String()
	}
	return out
}

// StageContext is what a running stage sees: its node, its inputs' outputs, progress
// reporting and resume points.
type StageContext struct {
	Node     *Node
	graph    *Graph
	store    *artifacts.Store
	actions  map[*Node]artifacts.Action
	progress Progress
	index    int
	total    int
	// resumedFrom is the checkpoint round the stage continued from, if any.
	resumedFrom int
	// extendedFrom is the rounds of the cached shorter run LoadExtension found (0: none).
	extendedFrom int
	// ctx and remote let checkpoints travel to and from the remote (nil: none).
	ctx    context.Context
	remote *remote.Remote
	// pushFailing is set while checkpoints cannot be pushed (only the first failure is
	// logged, and the next success).
	pushFailing bool
	// early holds the outputs stored by PutOutput, by name.
	early map[string]artifacts.Digest
	// live receives a train stage's progress journal (nil: none; live.go).
	live *live.Publisher
	// build and start make the provenance of this process's segment of a train stage;
	// prior holds, by round, the segments before each resume point found (a checkpoint's,
	// an extension's), segments those before the one resumed from, and lastDone the last
	// round reported (segments.go).
	build    BuildInfo
	start    time.Time
	prior    map[int][]Segment
	segments []Segment
	lastDone int
}

// resumable records the history of the rounds before a resume point after round.
func (sc *StageContext) resumable(round int, history []Segment) {
	if sc.prior == nil {
		sc.prior = map[int][]Segment{}
	}
	sc.prior[round] = history
}

// history is the stage's segments up to round: those before the resume point, then this
// process's.
func (sc *StageContext) history(round int) []Segment {
	return append(segmentsUpTo(sc.segments, sc.resumedFrom), sc.build.segment(sc.resumedFrom+1, round, time.Since(sc.start)))
}

// PutOutput stores an output of the stage now; its action entry, written when the stage
// returns, names it with the rest. Until then nothing refers to the blob (gc removes it if
// the stage fails).
func (sc *StageContext) PutOutput(name string, blob []byte) error {
	if _, dup := sc.early[name]; dup {
		return fmt.Errorf("output %s given twice", name)
	}
	d, err := sc.store.Put(blob)
	if err != nil {
		return fmt.Errorf("storing output %s: %w", name, err)
	}
	if sc.early == nil {
		sc.early = map[string]artifacts.Digest{}
	}
	sc.early[name] = d
	return nil
}

// Resumed records that the stage continued from its checkpoint after round.
func (sc *StageContext) Resumed(round int) {
	sc.resumedFrom = round
	sc.segments = segmentsUpTo(sc.prior[round], round)
	sc.live.Resumed(round)
	if round == sc.extendedFrom {
		sc.Logf("%s %s", sc.Node.Name, manifest.ContinuesPhrase(round))
		return
	}
	sc.Logf("resuming %s from its checkpoint after round %d", sc.Node.Name, round)
}

// manifest.Manifest is the manifest the stage's graph came from.
func (sc *StageContext) Manifest() *manifest.Manifest { return sc.graph.Manifest }

// Run is the grid cell the stage belongs to (nil for the report stage).
func (sc *StageContext) Run() *manifest.Run { return sc.Node.Run }

// Runs lists every run the report stage covers (nil for other stages).
func (sc *StageContext) Runs() []*manifest.Run { return sc.Node.Runs }

// Data describes the run's dataset as the graph was planned with it.
func (sc *StageContext) Data() *manifest.DataDesc { return sc.Node.Data }

// ShiftFilesDigest is the digest of the real corrupted files a shift stage was planned with.
func (sc *StageContext) ShiftFilesDigest() string { return sc.Node.ShiftFilesDigest() }

// NumInputs is the number of the stage's input stages of kind from.
func (sc *StageContext) NumInputs(from string) int { return len(sc.Node.InputsOf(from)) }

// Input returns output name of the stage's input of kind from (InputAt's first).
func (sc *StageContext) Input(from, name string) ([]byte, error) { return sc.InputAt(from, 0, name) }

// InputAt returns output name of the stage's i-th input of kind from.
func (sc *StageContext) InputAt(from string, i int, name string) ([]byte, error) {
	ins := sc.Node.InputsOf(from)
	if i >= len(ins) {
		return nil, fmt.Errorf("stage %s has no %s input %d", sc.Node.Name, from, i)
	}
	in := ins[i]
	a, ok := sc.actions[in]
	if !ok {
		return nil, fmt.Errorf("input %s of %s has not run", in.Name, sc.Node.Name)
	}
	d, ok := a.Outputs[name]
	if !ok {
		if remote.Partial(a) {
			return nil, fmt.Errorf("input %s has no output %q: its result is partial %s", in.Name, name, partialNote(a))
		}
		return nil, fmt.Errorf("input %s has no output %q", in.Name, name)
	}
	b, err := sc.store.Get(d)
	if err != nil {
		return nil, fmt.Errorf("reading output %s of %s: %w", name, in.Name, err)
	}
	return b, nil
}

// InputNames lists the output names of the stage's input of kind from, sorted.
func (sc *StageContext) InputNames(from string) []string {
	a := sc.actions[sc.Node.Input(from)]
	names := make([]string, 0, len(a.Outputs))
	for n := range a.Outputs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Progress reports progress within the stage (e.g. rounds done of rounds total).
func (sc *StageContext) Progress(done, total int, note string) {
	sc.lastDone = done
	sc.progress.Step(sc.Node.Name, done, total, note)
}

// Logf prints a message about the stage without disturbing the progress display.
func (sc *StageContext) Logf(format string, args ...any) {
	sc.progress.Logf(format, args...)
}

// checkpointRound returns the round of the resume point a stage's earlier run left in the
// store, if there is one (its blobs are verified only when the stage resumes).
func checkpointRound(store *artifacts.Store, n *Node) (int, bool) {
	idx, ok := readCheckpointIndex(store, n)
	return idx.Round, ok && idx.Round > 0
}

// readCheckpointIndex reads the index of n's latest resume point in the local store.
func readCheckpointIndex(store *artifacts.Store, n *Node) (checkpointIndex, bool) {
	var idx checkpointIndex
	d, found, err := store.GetRef(checkpointRef(n))
	if err != nil || !found {
		return idx, false
	}
	b, err := store.Get(d)
	if err != nil || json.Unmarshal(b, &idx) != nil {
		return idx, false
	}
	return idx, true
}

// resumeNote is a plan's addition to the reason a stage runs when it will not start from
// scratch: it resumes from its checkpoint (an interrupted run) or continues a cached
// shorter run, whichever has more rounds done, as the train stage does.
func resumeNote(store *artifacts.Store, n *Node) string {
	ext := extensionRounds(store, n)
	if round, ok := checkpointRound(store, n); ok && round >= ext {
		return fmt.Sprintf("; resumes from its checkpoint after round %d", round)
	}
	if ext > 0 {
		return fmt.Sprintf("; %s", manifest.ContinuesPhrase(ext))
	}
	return ""
}

type checkpointIndex struct {
	Round   int                         `json:"round"`
	Outputs map[string]artifacts.Digest `json:"outputs"`
	// Segments is where rounds 1..Round ran (segments.go); absent in older checkpoints.
	Segments []Segment `json:"segments,omitempty"`
}

// SaveCheckpoint stores a resume point after round: each blob write passes is stored as it
// comes (unchanged ones dedupe against earlier checkpoints), then the stage's checkpoint
// ref moves to them. A write that fails, or names a blob twice, leaves the previous resume
// point in place.
func (sc *StageContext) SaveCheckpoint(round int, write func(put func(name string, blob []byte) error) error) error {
	idx := checkpointIndex{Round: round, Outputs: map[string]artifacts.Digest{}, Segments: sc.history(round)}
	err := write(func(name string, blob []byte) error {
		if _, dup := idx.Outputs[name]; dup {
			return fmt.Errorf("checkpoint blob %q written twice", name)
		}
		d, err := sc.store.Put(blob)
		if err != nil {
			return err
		}
		idx.Outputs[name] = d
		return nil
	})
	if err != nil {
		return err
	}
	b, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	d, err := sc.store.Put(b)
	if err != nil {
		return err
	}
	if err := sc.store.PutRef(checkpointRef(sc.Node), d); err != nil {
		return err
	}
	return sc.pushCheckpoint(idx, d)
}

// loadLocalCheckpoint returns the latest resume point of this stage in the local store,
// if a previous run of the same stage key left one whose blobs all verify.
func (sc *StageContext) loadLocalCheckpoint() (round int, blobs map[string][]byte, ok bool) {
	idx, found := readCheckpointIndex(sc.store, sc.Node)
	if !found {
		return 0, nil, false
	}
	sc.resumable(idx.Round, idx.Segments)
	blobs = map[string][]byte{}
	for name, d := range idx.Outputs {
		v, err := sc.store.Get(d)
		if err != nil {
			return 0, nil, false
		}
		blobs[name] = v
	}
	return idx.Round, blobs, true
}

// LogCapture collects the store's log lines so that a plan can quote why a cached entry
// was rejected. It is safe for concurrent use.
type LogCapture struct {
	mu    sync.Mutex
	lines []string
	// Next receives every line too (may be nil).
	Next func(string)
}

// Logf records a line (it has the signature of artifacts.Options.Logf).
func (c *LogCapture) Logf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	c.mu.Lock()
	c.lines = append(c.lines, s)
	c.mu.Unlock()
	if c.Next != nil {
		c.Next(s)
	}
}

// Reset drops captured lines.
func (c *LogCapture) Reset() {
	c.mu.Lock()
	c.lines = nil
	c.mu.Unlock()
}

// Take returns and clears captured lines.
func (c *LogCapture) Take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.lines
	c.lines = nil
	return l
}
