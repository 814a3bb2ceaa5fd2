package manifest

// totalRoundsMethods are the methods whose first rounds depend on the total number of
// rounds (DM-PFL's phase blocks cut T; FedDST's readjustment rate is annealed over T).
var totalRoundsMethods = map[string]bool{"dmpfl": true, "dmpfl_plus": true, "feddst": true}

// Extendable says whether a run of method with more rounds continues a shorter one
// exactly (the first R rounds of a longer run are those of an R-round run), so that
// raising train.rounds may resume from the cached shorter run.
func Extendable(method string) bool { return !totalRoundsMethods[method] }
