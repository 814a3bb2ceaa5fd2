package manifest

// totalRoundsMethods are the methods whose first rounds depend on the total number of
// rounds (DM-PFL's phase blocks cut T; FedDST's readjustment rate is annealed over T).
var totalRoundsMethods = map[string]bool{"dmpfl": true, "dmpfl_plus": true, "feddst": true}

// Extendable says whether a run continues a shorter one exactly when train.rounds is
// raised (the first R rounds of a longer run are those of an R-round run), so that it may
// resume from the cached shorter run. Not for the methods whose schedule depends on the
// total rounds, nor for FedSelect's official variant, whose last round aggregates nothing
// (issue 16), nor for pFedFDA's own code (impl paper, the default), whose last round
// trains every client.
func Extendable(r *Run) bool {
	if totalRoundsMethods[r.Method] {
		return false
	}
	if r.Method == "pfedfda" && r.Options["impl"] != "flbench" {
		return false
	}
	return !(r.Method == "fedselect" && r.Options["variant"] == "official")
}

// evalChangesState reports whether evaluating r's clients changes its training state:
// FL-bench's test pass, which FedALA's and FedDPA's impl flbench replay before every
// evaluation, leaves its ray workers' models (and FedALA's W) as the next round's training
// finds them; pFedFDA fits its clients' evaluation models then, which the state's per-round
// fingerprints record.
func evalChangesState(r *Run) bool {
	switch r.Method {
	case "fedala", "feddpa":
		return r.Options["impl"] == "flbench"
	case "pfedfda":
		return true
	}
	return false
}

// ExtendableFrom says whether r may continue a cached shorter run of rounds rounds:
// Extendable, and, where evaluating changes the training state, only when r evaluates
// after round rounds too (every run evaluates after its last round; a longer run from
// scratch does so only every train.eval_every rounds).
func ExtendableFrom(r *Run, rounds int) bool {
	if !Extendable(r) {
		return false
	}
	if evalChangesState(r) {
		ev := r.Train.EvalEvery
		return ev > 0 && rounds%ev == 0
	}
	return true
}
