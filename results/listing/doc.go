// Package listing reads what `fedpipe ls` (and `show`, `diff`) list of a manifest's runs
// from the store: one Row per run with its grid choices, its state (cached, stale with
// the reason, or missing), its final and best accuracies, its train stage's provenance and
// test-set intervals, and with WithEvals its evaluation rounds; and lays rows out as
// cells for the table and CSV. It runs nothing, and reads every stored table through
// package results.
package listing
