package manifest

import (
	"fmt"
	"slices"
	"strings"
)

// LoggedRun is one run log the authors of a paper published for a method of the manifest:
// the pooled test accuracy it logged at every evaluation round, before and after
// fine-tuning, each figure with the line of the log it was read from. These are figures
// from elsewhere, never settings: they enter no key, and `fedpipe reproduced`, `ls --evals`
// and docs/reproduced.md show the kept curve beside them (kept.CompareCurve).
type LoggedRun struct {
	// Method is the label of the manifest's method the log is of.
	Method string `yaml:"method"`
	// Source names the log: repository, path (and commit where it matters).
	Source string `yaml:"source"`
	// Deviation says how and why the kept curve differs from this log (evidence from the
	// logs and the code), or "differs from the authors' log; cause not found". A kept curve
	// more than CurveThreshold points off its log (kept.CompareCurve) needs one, here or
	// in the method's expectation.
	Deviation string `yaml:"deviation"`
	// Absent, set where the authors published no log of the method, says where the logs
	// were looked for and what they hold instead; Source then names the place searched and
	// Evals stays empty. The page shows the kept curve alone, saying so.
	Absent string `yaml:"absent"`
	// Evals are the logged evaluation rounds, in increasing round order.
	Evals []LoggedEval `yaml:"evals"`
}

// LoggedEval is one evaluation round of a LoggedRun, in percent.
type LoggedEval struct {
	Round  int     `yaml:"round" check:"gt0"`
	Before float64 `yaml:"before" check:"ge0"`
	// After is the figure after fine-tuning; nil where the run did not fine-tune (FL-bench
	// then logs 0.00).
	After *float64 `yaml:"after"`
	// Line is the line of the log the round's figures are on.
	Line int `yaml:"line" check:"gt0"`
}

// validateLogs checks the logs section: every entry names a method of the manifest once,
// a source and at least one round, or no round and what says the log is absent; rounds
// increase, lie within train.rounds, and every figure is a percentage with the line it
// was read from.
func (m *Manifest) validateLogs() error {
	labels := make([]string, 0, len(m.Methods))
	for _, ms := range m.Methods {
		labels = append(labels, ms.Name)
	}
	seen := map[string]int{}
	for i, l := range m.Logs {
		f := fmt.Sprintf("logs[%d]", i)
		if l.Method == "" {
			return m.errAtField(f, "method missing: the label of the method the log is of")
		}
		if !slices.Contains(labels, l.Method) {
			msg := fmt.Sprintf("no method labelled %q in this manifest (methods: %s)", l.Method, strings.Join(labels, ", "))
			if near := nearest(l.Method, labels); near != "" {
				msg = fmt.Sprintf("no method labelled %q in this manifest (did you mean %q?)", l.Method, near)
			}
			return m.errAtField(f+".method", "%s", msg)
		}
		if j, dup := seen[l.Method]; dup {
			return m.errAtField(f+".method", "%s already has a log (logs[%d]): one log per method", l.Method, j)
		}
		seen[l.Method] = i
		if strings.TrimSpace(l.Source) == "" {
			return m.errAtField(f+".source", "source missing: name the log (repository and path)")
		}
		if strings.TrimSpace(l.Absent) != "" {
			if len(l.Evals) > 0 {
				return m.errAtField(f+".absent", "a log said absent lists %d rounds: keep either absent or evals", len(l.Evals))
			}
			continue
		}
		if len(l.Evals) == 0 {
			return m.errAtField(f+".evals", "no rounds: list the logged evaluations ({round, before, after, line}), or say where the authors' logs were searched in absent")
		}
		prev := 0
		for j, e := range l.Evals {
			g := fmt.Sprintf("%s.evals[%d]", f, j)
			if e.Round <= prev {
				return m.errAtField(g+".round", "round %d after round %d: rounds must increase", e.Round, prev)
			}
			prev = e.Round
			if e.Round > m.Train.Rounds {
				return m.errAtField(g+".round", "round %d is past train.rounds (%d)", e.Round, m.Train.Rounds)
			}
			if e.Line == 0 {
				err := m.errAtField(g+".line", "line missing: the line of the log the figures are on")
				if p, ok := m.Pos[g]; ok { // at the entry that lacks it, not the section
					err.(*InputError).Line, err.(*InputError).Column = p.Line, p.Column
				}
				return err
			}
			if e.Before > 100 {
				return m.errAtField(g+".before", "%g is not a percentage", e.Before)
			}
			if e.After != nil && (*e.After < 0 || *e.After > 100) {
				return m.errAtField(g+".after", "%g is not a percentage", *e.After)
			}
		}
	}
	return nil
}

// LogOf is the manifest's log of the method labelled label, or nil.
func (m *Manifest) LogOf(label string) *LoggedRun {
	for i := range m.Logs {
		if m.Logs[i].Method == label {
			return &m.Logs[i]
		}
	}
	return nil
}

// DeviationOf is the recorded deviation of the method labelled label from its log: the
// log entry's own, else that of the method's expectation of the best figure before
// fine-tuning (best_pooled, then any of its expectations with one); "" when none.
func (m *Manifest) DeviationOf(label string) string {
	if l := m.LogOf(label); l != nil && l.Deviation != "" {
		return l.Deviation
	}
	var any string
	for _, e := range m.Expect {
		if e.Method != label || e.Deviation == "" {
			continue
		}
		if e.Metric == "best_pooled" {
			return e.Deviation
		}
		if any == "" {
			any = e.Deviation
		}
	}
	return any
}
