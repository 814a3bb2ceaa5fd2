// Package verify compares a manifest's measured figures with its `expect` entries: a
// published value within a tolerance, or a claim that one method beats another.
package verify

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
)

// Verdicts of a cell.
const (
	Pass    = "pass"
	Fail    = "fail"
	Missing = "not computed"
	// Stale: none of the cell's seeds has a current result, but a kept result made by
	// other code, settings or backend exists for at least one (Options.Stale).
	Stale = "stale"
	// Needs: the cell cannot be computed here, because an input its published setting
	// requires is missing (Cell.Needs says which: model.init's pretrained weights).
	Needs = "needs"
)

// Options changes how Verify treats incomplete results.
type Options struct {
	// PartialSeeds measures a cell over the seeds whose results are present, instead of
	// reporting the whole cell not computed when any seed is missing (kept paper-scale
	// results, computed seed by seed). Cell.Seeds says how many were used, SeedsOf of how
	// many.
	PartialSeeds bool
	// Stale, if set, is asked about a stage whose current result is missing: it returns
	// why a kept result of that stage is out of date (e.g. "train: code 6 → 7"), and ok
	// when one exists, with the key old of that kept result (whose figure, if the store
	// still holds it, Cell.StaleMeasured reports).
	Stale func(n *pipeline.Node) (why string, old artifacts.Digest, ok bool)
}

// Cell is one expectation checked on one configuration (grid cell) of the manifest.
type Cell struct {
	Method string `json:"method"`
	// Config is the run label without the seed (method and grid choices).
	Config string `json:"config"`
	Metric string `json:"metric"`
	// Published, Std and Tolerance are in percent, as the expectation gives them.
	Published float64 `json:"published,omitempty"`
	Std       float64 `json:"published_std,omitempty"`
	Tolerance float64 `json:"tolerance"`
	// Above names the method this one must beat; Other is that method's measured figure.
	Above string  `json:"above,omitempty"`
	Other float64 `json:"other,omitempty"`
	// Measured is the mean over seeds (percent); MeasuredStd the std over seeds.
	Measured    float64 `json:"measured"`
	MeasuredStd float64 `json:"measured_std"`
	Seeds       int     `json:"seeds"`
	// SeedsOf is the number of seeds the manifest runs the cell with.
	SeedsOf int     `json:"seeds_of,omitempty"`
	Diff    float64 `json:"diff"`
	Verdict string  `json:"verdict"`
	// Known is the expectation's recorded deviation, set on a failing cell that has one:
	// the difference is known, so the cell does not fail the command.
	Known string `json:"known_deviation,omitempty"`
	// StaleWhy says, for a stale cell (or a measured one some of whose seeds are stale),
	// what changed since the kept result was made.
	StaleWhy string `json:"stale_why,omitempty"`
	// StaleMeasured is, for a stale cell, the mean of the figures its stale kept results
	// hold, over StaleSeeds seeds (0: none is held): what older code or settings measured.
	StaleMeasured float64 `json:"stale_measured,omitempty"`
	StaleSeeds    int     `json:"stale_seeds,omitempty"`
	// Needs names, for a cell whose verdict is Needs, the missing input and where it comes
	// from (e.g. "model.init: resnet18-imagenet.safetensors (…)").
	Needs string `json:"needs,omitempty"`
	// KeptOn names, for a kept-results verdict, the backend family whose kept result the
	// verdict reads ("xla-cuda") when it is not the reference backend's or when other
	// backends keep results of the cell too; KeptOthers says what those read ("fpfast:
	// stale"). Both are empty for a cell kept on the reference backend alone.
	KeptOn     string   `json:"kept_on,omitempty"`
	KeptOthers []string `json:"kept_others,omitempty"`
	// Nodes are the keys of the stages that gave the measured figures (one per seed used).
	Nodes  []string `json:"stage_keys,omitempty"`
	Source string   `json:"source,omitempty"`
	// Shift and Level select a shift-stage row (see manifest.Expectation); empty: unshifted.
	Shift string  `json:"shift,omitempty"`
	Level float64 `json:"level,omitempty"`
	// PublishedRuns is the number of runs the published mean ± std is over, where the paper
	// states it (0: not stated).
	PublishedRuns int `json:"published_runs,omitempty"`
	// Evidence is the measured value's interval and its distance from the published one.
	Evidence
	// Provenance says, per seed measured, where and how the number was computed: the
	// provenance recorded with the run's train stage and with the stage the figure was read
	// from (evaluate or shift).
	Provenance []RunProvenance `json:"provenance,omitempty"`
}

// RunProvenance is the provenance of one seed's result behind a cell (see Cell).
type RunProvenance struct {
	Run  string `json:"run"`
	Seed int64  `json:"seed"`
	// Train is the train stage's provenance, Measured that of the stage the figure comes
	// from; nil when the result records none.
	Train    *pipeline.Provenance `json:"train,omitempty"`
	Measured *pipeline.Provenance `json:"measured,omitempty"`
}

// cellKey identifies a grid cell independently of the method: its grid choices.
func cellKey(r *manifest.Run) string {
	var parts []string
	for _, a := range r.Vary {
		parts = append(parts, a.Path+"="+a.Value)
	}
	return strings.Join(parts, " ")
}

// measure returns the metric of method on every cell, averaged over seeds; a cell some
// of whose seeds are not in the store is reported missing.
type measured struct {
	config  string
	values  []float64
	missing bool
	seeds   int      // runs of the cell (seeds) in the manifest
	stale   []string // why kept results of missing seeds are stale
	// staleValues are the metric's values in those stale kept results (those still held).
	staleValues []float64
	nodes       []string // keys of the stages measured
	prov        []RunProvenance
	// testSet is, per value, the run's test-set interval of the metric (invalid: none).
	testSet []testSetInfo
}

// provenanceOf reads the provenance of the result that node n (whose action is a) read
// for run r.
func provenanceOf(store *artifacts.Store, n *pipeline.Node, a artifacts.Action, r *manifest.Run) (RunProvenance, error) {
	rp := RunProvenance{Run: r.Label(), Seed: r.Seed}
	if p, ok := pipeline.ProvenanceOf(a); ok {
		rp.Measured = &p
	}
	if t := pipeline.TrainOf(n); t != nil {
		p, ok, err := pipeline.StageProvenance(store, t)
		if err != nil {
			return rp, err
		}
		if ok {
			rp.Train = &p
		}
	}
	return rp, nil
}

func measure(g *pipeline.Graph, store *artifacts.Store, e manifest.Expectation, method string, opt Options) (map[string]*measured, []string, error) {
	kind, output := manifest.KindEvaluate, results.OutEvaluateSummary
	if e.Shift != "" {
		kind, output = manifest.KindShift, results.OutShiftSummary
	}
	out := map[string]*measured{}
	var order []string
	for _, n := range g.Nodes {
		if n.Kind != kind {
			continue
		}
		var run *manifest.Run
		for _, r := range n.RunsOf() {
			if r.MethodName == method {
				run = r
				break
			}
		}
		if run == nil {
			continue
		}
		k := cellKey(run)
		c, ok := out[k]
		if !ok {
			c = &measured{config: run.Config()}
			out[k] = c
			order = append(order, k)
		}
		c.seeds++
		a, ok, err := store.GetAction(artifacts.Digest(n.Key))
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			c.missing = true
			if opt.Stale != nil {
				why, old, ok := opt.Stale(n)
				if ok {
					c.stale = append(c.stale, why)
					if oa, held, err := store.GetAction(old); err == nil && held {
						if b, err := results.Blob(store, oa, output); err == nil {
							if v, ok, err := valueOf(b, e); err == nil && ok {
								c.staleValues = append(c.staleValues, v)
							}
						}
					}
				}
			}
			continue
		}
		c.nodes = append(c.nodes, n.Key.String())
		b, err := results.Blob(store, a, output)
		if err != nil {
			c.missing = true
			continue
		}
		rp, err := provenanceOf(store, n, a, run)
		if err != nil {
			return nil, nil, err
		}
		c.prov = append(c.prov, rp)
		v, ok, err := valueOf(b, e)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			c.missing = true
			continue
		}
		c.values = append(c.values, v)
		c.testSet = append(c.testSet, testSetOf(store, a, b, e))
	}
	return out, order, nil
}

// valueOf reads expectation e's metric from a stage's encoded summary (or shift summary)
// b; ok is false when the result has no such figure (an after-fine-tuning figure of a run
// that does not fine-tune, a missing shift row or cost).
func valueOf(b []byte, e manifest.Expectation) (float64, bool, error) {
	if e.Shift != "" {
		rows, _, err := results.Decode[results.ShiftSummary](b)
		if err != nil {
			return 0, false, err
		}
		v, ok := shiftValue(rows, e)
		return v, ok, nil
	}
	s, meta, err := results.DecodeOne[results.Summary](b)
	if err != nil {
		return 0, false, err
	}
	if v, ok, isCost := costValue(meta, e.Metric); isCost {
		return v, ok, nil
	}
	v := summary.Value(s, e.Metric)
	return v, !math.IsNaN(v), nil
}

// Verify checks every expectation of the graph's manifest against the results in store.
// It runs nothing.
func Verify(g *pipeline.Graph, store *artifacts.Store) ([]Cell, error) {
	return VerifyWith(g, store, Options{})
}

// VerifyWith is Verify with options (kept results: partial seeds, stale results).
func VerifyWith(g *pipeline.Graph, store *artifacts.Store, opt Options) ([]Cell, error) {
	var cells []Cell
	for _, e := range g.Manifest.Expect {
		mine, order, err := measure(g, store, e, e.Method, opt)
		if err != nil {
			return nil, err
		}
		var other map[string]*measured
		if e.Above != "" {
			oe := e
			if e.AboveMetric != "" {
				oe.Metric = e.AboveMetric
			}
			if other, _, err = measure(g, store, oe, e.Above, opt); err != nil {
				return nil, err
			}
		}
		if len(order) == 0 {
			// An expectation that matches no run is a failure, never a silent pass.
			cells = append(cells, Cell{Method: e.Method, Config: "(no run of " + e.Method + " matches)", Metric: e.Metric,
				Published: e.Published, Std: e.Std, Tolerance: e.Tolerance, Above: e.Above, Source: e.Source,
				Verdict: Missing, Shift: e.Shift, Level: e.Level})
			continue
		}
		for _, k := range order {
			m := mine[k]
			c := Cell{Method: e.Method, Config: m.config, Metric: e.Metric, Published: e.Published, Std: e.Std,
				Tolerance: e.Tolerance, Above: e.Above, Seeds: len(m.values), SeedsOf: m.seeds, Source: e.Source,
				Verdict: Missing, Shift: e.Shift, Level: e.Level, StaleWhy: strings.Join(dedup(m.stale), "; "), Nodes: m.nodes}
			o := other[k]
			if !complete(m, opt) || (e.Above != "" && (o == nil || !complete(o, opt))) {
				if len(m.values) == 0 && len(m.stale) > 0 {
					c.Verdict = Stale
					if len(m.staleValues) > 0 {
						c.StaleMeasured, c.StaleSeeds = summary.Mean(m.staleValues), len(m.staleValues)
					}
				}
				cells = append(cells, c)
				continue
			}
			c.Measured, c.MeasuredStd = summary.Mean(m.values), summary.Std(m.values)
			c.Provenance = m.prov
			c.PublishedRuns = e.Runs
			c.setEvidence(m)
			if e.Above != "" {
				c.Other = summary.Mean(o.values)
				c.Diff = c.Measured - c.Other
				c.Verdict = Fail
				if c.Diff > e.Tolerance {
					c.Verdict = Pass
				}
			} else {
				c.Diff = c.Measured - e.Published
				c.Verdict = Fail
				if math.Abs(c.Diff) <= e.Tolerance {
					c.Verdict = Pass
				}
			}
			if c.Verdict == Fail {
				c.Known = e.Deviation
			}
			cells = append(cells, c)
		}
	}
	return cells, nil
}

// complete reports whether m can be measured: every seed present, or (PartialSeeds) one.
func complete(m *measured, opt Options) bool {
	if opt.PartialSeeds {
		return len(m.values) > 0
	}
	return !m.missing && len(m.values) > 0
}

// dedup drops repeated strings, keeping the first of each.
func dedup(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Markdown lays the cells out as a table.
func Markdown(cells []Cell) string {
	var b strings.Builder
	b.WriteString("| method | cell | metric | expected | measured (mean ± std over seeds) | diff | verdict |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---|\n")
	for _, c := range cells {
		b.WriteString("| " + strings.Join(c.Row(), " | ") + " |\n")
	}
	return b.String()
}

// Row formats the cell as the verify table shows it (here and in the report): method,
// cell (the run label, with the shift and level when the expectation names one), metric,
// expected (± the published std where the expectation gives one), measured (mean ± std
// over seeds; no spread for one seed), difference and verdict.
func (c Cell) Row() []string {
	num := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	if _, _, isCost := costValue(nil, c.Metric); isCost {
		num = func(v float64) string { return fmt.Sprintf("%.4g", v) }
	}
	expected := fmt.Sprintf("%s ± %s (%stol %s)", num(c.Published), num(c.Std), c.evidenceRuns(), num(c.Tolerance))
	if c.Std == 0 { // the paper gave no spread (one run, or none reported)
		expected = fmt.Sprintf("%s (%stol %s)", num(c.Published), c.evidenceRuns(), num(c.Tolerance))
	}
	if c.Above != "" {
		expected = fmt.Sprintf("> %s + %.2f", c.Above, c.Tolerance)
	}
	meas, diff := "—", "—"
	if c.Verdict != Missing && c.Verdict != Stale && c.Verdict != Needs {
		meas = num(c.Measured)
		if c.Seeds > 1 { // one seed has no spread to show
			meas += " ± " + num(c.MeasuredStd)
		}
		seeds := fmt.Sprintf("%d seeds", c.Seeds)
		switch {
		case c.SeedsOf > c.Seeds:
			seeds = fmt.Sprintf("%d of %d seeds", c.Seeds, c.SeedsOf)
		case c.Seeds == 1:
			seeds = "1 seed"
		}
		meas += " (" + seeds + ")" + c.evidenceMeasured()
		diff = "+" + num(c.Diff)
		if c.Diff < 0 {
			diff = num(c.Diff)
		}
		diff += c.evidenceDiff()
	}
	cell := c.Config
	if c.Shift != "" {
		cell = strings.TrimSpace(fmt.Sprintf("%s [%s %v]", c.Config, c.Shift, c.Level))
	}
	verdict := c.Verdict
	if c.Known != "" {
		verdict += " (known deviation)"
	}
	if c.Verdict == Pass || c.Verdict == Fail {
		verdict += c.SpreadVerdict()
	}
	return []string{c.Method, cell, c.Metric, expected, meas, diff, verdict}
}

// shiftValue reads the expectation's row from a shift summary table, in percent.
func shiftValue(rows []results.ShiftSummary, e manifest.Expectation) (float64, bool) {
	for _, r := range rows {
		if r.Shift == e.Shift && math.Abs(r.Level-e.Level) < 1e-9 {
			if e.Metric == "final_pooled" {
				return 100 * r.Pooled, true
			}
			return 100 * r.Mean, true
		}
	}
	return 0, false
}

// costValue reads a cost metric from an evaluate summary's metadata (the train stage's
// cost table averaged over clients); isCost is false for accuracy metrics.
func costValue(meta map[string]string, metric string) (v float64, ok, isCost bool) {
	get := func(k string) (float64, bool) {
		s, ok := meta[k]
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	switch metric {
	case "comm_mb":
		up, ok1 := get("mb_up")
		down, ok2 := get("mb_down")
		return up + down, ok1 && ok2, true
	case "mb_up", "mb_down":
		v, ok := get(metric)
		return v, ok, true
	case "flops_1e12":
		v, ok := get("flops")
		return v / 1e12, ok, true
	}
	return 0, false, false
}
