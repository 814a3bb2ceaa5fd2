package methods

import (
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// optionCombos lists every combination of a method's word parameters' choices (with ""
// for a parameter left at its default), so a declaration is checked for every run a
// manifest can make.
func optionCombos(d manifest.MethodDef) []map[string]string {
	combos := []map[string]string{{}}
	for _, p := range d.ParamDefs() {
		if len(p.Choices) == 0 {
			continue
		}
		var next []map[string]string
		for _, c := range combos {
			for _, v := range append([]string{""}, p.Choices...) {
				n := map[string]string{}
				for k, x := range c {
					n[k] = x
				}
				if v != "" {
					n[p.Name] = v
				}
				next = append(next, n)
			}
		}
		combos = next
	}
	return combos
}

// Every registered method declares, for every combination of its word options, whether a
// run may continue a cached shorter one, and the declaration agrees with what the method
// does: one that trains every client in its last round (LastRoundAll) never extends.
// (cmd/fedpipe TestExtendRunIsBitIdentical checks each declaration against the bits of an
// extended run and a run from scratch.)
func TestEveryMethodDeclaresItsCapabilities(t *testing.T) {
	var references []string
	for _, name := range manifest.MethodNames() {
		if manifest.CostReference(name) {
			references = append(references, name)
		}
	}
	if len(references) != 1 {
		t.Errorf("methods declaring CostReference: %v, want exactly one (the cost table's reference)", references)
	}
	for _, name := range manifest.MethodNames() {
		d, _ := manifest.LookupMethod(name)
		if d.Extension == nil {
			t.Errorf("%s: MethodDef.Extension is not declared (manifest.ExtendAlways, ExtendAtEvaluation or ExtendNever)", name)
			continue
		}
		for _, opts := range optionCombos(d) {
			r := &manifest.Run{Method: name, Options: opts}
			e := manifest.ExtensionOf(r)
			if e == manifest.ExtensionUndeclared {
				t.Errorf("%s %v: Extension undeclared", name, opts)
				continue
			}
			m, err := train.NewMethod(r)
			if err != nil {
				t.Errorf("%s %v: %v", name, opts, err)
				continue
			}
			if l, ok := m.(train.LastRoundAll); ok && l.LastRoundAll() && e != manifest.ExtendNever {
				t.Errorf("%s %v: trains every client in its last round, yet declares extension %v", name, opts, e)
			}
		}
	}
}

// The declarations FedOBP's tables rely on: FedSelect's official variant and pFedFDA's own
// code never extend, DM-PFL never; FedALA's and FedDPA's impl flbench and pFedFDA's
// continue only a shorter run whose last round (always evaluated) the longer run evaluates
// too; other methods continue any shorter run.
func TestExtendableFromEvaluationRounds(t *testing.T) {
	for _, c := range []struct {
		method, opt, val string
		every, from      int
		want             bool
	}{
		{"fedala", "impl", "flbench", 100, 100, true}, {"fedala", "impl", "flbench", 100, 150, false},
		{"feddpa", "impl", "flbench", 2, 4, true}, {"feddpa", "impl", "flbench", 2, 3, false}, {"feddpa", "impl", "flbench", 0, 3, false},
		{"feddpa", "impl", "paper", 2, 3, true}, {"fedavg", "", "", 2, 3, true}, {"dmpfl", "", "", 2, 4, false},
		{"pfedfda", "impl", "flbench", 2, 3, false}, {"pfedfda", "impl", "flbench", 2, 2, true},
		{"pfedfda", "impl", "paper", 2, 2, false}, {"pfedfda", "", "", 2, 2, false},
		{"fedselect", "variant", "official", 1, 2, false}, {"fedselect", "variant", "paper", 1, 3, true}, {"fedselect", "", "", 1, 3, true},
		{"nosuchmethod", "", "", 1, 2, false},
	} {
		r := &manifest.Run{Method: c.method, Options: map[string]string{}, Train: manifest.TrainSpec{EvalEvery: c.every}}
		if c.opt != "" {
			r.Options[c.opt] = c.val
		}
		if got := manifest.ExtendableFrom(r, c.from); got != c.want {
			t.Errorf("%s %s=%q, eval_every %d, from round %d: %v, want %v", c.method, c.opt, c.val, c.every, c.from, got, c.want)
		}
		if got, want := manifest.Extendable(r), c.want || c.method == "feddpa" || c.method == "fedala" ||
			c.method == "pfedfda" && c.val == "flbench"; got != want {
			t.Errorf("%s %s=%q: Extendable %v, want %v", c.method, c.opt, c.val, got, want)
		}
	}
}
