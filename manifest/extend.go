package manifest

import "fmt"

// Extension says how a run of a method may continue a cached shorter run of the same
// settings when train.rounds is raised. Every method declares it (MethodDef.Extension);
// the zero value, ExtensionUndeclared, is what a method that forgot gets, which
// TestEveryMethodDeclaresItsCapabilities (stages/train/methods) refuses and which never
// extends.
type Extension int

const (
	// ExtensionUndeclared: the method did not say; treated as ExtendNever.
	ExtensionUndeclared Extension = iota
	// ExtendAlways: the first R rounds of a longer run are those of an R-round run, and
	// evaluating changes nothing the next round reads, so any shorter run may be continued.
	ExtendAlways
	// ExtendAtEvaluation: as ExtendAlways, but evaluating changes the training state
	// (FL-bench's test pass, which FedALA's and FedDPA's impl flbench replay, leaves its
	// ray workers' models as the next round finds them; pFedFDA fits its clients'
	// evaluation models, which the state's fingerprints record), so a shorter run may be
	// continued only when the longer run evaluates after its last round too.
	ExtendAtEvaluation
	// ExtendNever: the schedule depends on the total rounds (DM-PFL's phase blocks cut T;
	// FedDST's readjustment rate is annealed over T), or the last round differs from the
	// others (FedSelect's official variant aggregates nothing then; pFedFDA's own code
	// trains every client then), so a longer run starts over.
	ExtendNever
)

// String names e as the registry test prints it.
func (e Extension) String() string {
	switch e {
	case ExtendAlways:
		return "always"
	case ExtendAtEvaluation:
		return "at an evaluation"
	case ExtendNever:
		return "never"
	}
	return "undeclared"
}

// ExtensionIs declares the same Extension whatever the run's word options.
func ExtensionIs(e Extension) func(options map[string]string) Extension {
	return func(map[string]string) Extension { return e }
}

// ExtensionOf is the Extension r's method declares for r's word options
// (ExtensionUndeclared for a method that declares none or is not registered).
func ExtensionOf(r *Run) Extension {
	d, ok := LookupMethod(r.Method)
	if !ok || d.Extension == nil {
		return ExtensionUndeclared
	}
	return d.Extension(r.Options)
}

// Extendable says whether a run continues a shorter one exactly when train.rounds is
// raised (the first R rounds of a longer run are those of an R-round run), so that it may
// resume from the cached shorter run: its method declares ExtendAlways or
// ExtendAtEvaluation for its options.
func Extendable(r *Run) bool {
	e := ExtensionOf(r)
	return e == ExtendAlways || e == ExtendAtEvaluation
}

// ExtendableFrom says whether r may continue a cached shorter run of rounds rounds:
// Extendable, and, where evaluating changes the training state (ExtendAtEvaluation), only
// when r evaluates after round rounds too (every run evaluates after its last round; a
// longer run from scratch does so only every train.eval_every rounds).
func ExtendableFrom(r *Run, rounds int) bool {
	switch ExtensionOf(r) {
	case ExtendAlways:
		return true
	case ExtendAtEvaluation:
		ev := r.Train.EvalEvery
		return ev > 0 && rounds%ev == 0
	}
	return false
}

// ContinuesPhrase is the one phrase run, status and serve's page use for a train stage that
// continues a cached shorter run of rounds rounds (same everything but train.rounds).
func ContinuesPhrase(rounds int) string {
	return fmt.Sprintf("continues the cached %d-round run", rounds)
}
