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
