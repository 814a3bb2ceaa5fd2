package results

// The shift stage's tables (stages/shift_kind.go). Shift is "degree", "label" (level α),
// a corruption name (level: severity) or "cifar10c:<name>", a real CIFAR-10-C corruption
// (level: severity). Tables of runs without CIFAR-10-C omit the two optional columns
// (CIFAR10CColumns).

// CIFAR10CColumns are the shift tables' optional columns, present only when the shift
// block evaluates real CIFAR-10-C files.
var CIFAR10CColumns = []string{"cifar10c_own", "cifar10c_drawn"}

// ShiftClient is one row of a shift stage's `clients` table: one client's result under
// one shift at one level.
type ShiftClient struct {
	Shift string  `arrow:"shift"`
	Level float64 `arrow:"level"`
	Client
	// Own and Drawn count, under a real CIFAR-10-C corruption, the test samples replaced
	// by their own CIFAR-10-C version and by a same-class draw (0 elsewhere).
	Own   int `arrow:"cifar10c_own,optional"`
	Drawn int `arrow:"cifar10c_drawn,optional"`
}

// ShiftSummary is one row of a shift stage's `summary` table: one shift and level
// summarized over clients (mean ± std, and pooled). Its metadata labels the run ("run",
// "config", "seed") and, with CIFAR-10-C, states the replacement rule ("cifar10c") and the
// files' digest ("cifar10c_digest").
type ShiftSummary struct {
	Shift  string  `arrow:"shift"`
	Level  float64 `arrow:"level"`
	Mean   float64 `arrow:"accuracy_client_mean"`
	Std    float64 `arrow:"accuracy_client_std"`
	Pooled float64 `arrow:"accuracy_pooled"`
	// Own and Drawn total the clients' counts (see ShiftClient).
	Own   int `arrow:"cifar10c_own,optional"`
	Drawn int `arrow:"cifar10c_drawn,optional"`
}
