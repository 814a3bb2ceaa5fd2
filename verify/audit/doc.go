// Package audit checks kept train results against a recomputation: bit for bit, by
// retraining a result's first rounds with its full configuration and comparing the
// per-round fingerprints recorded with it (Node), and across backends, by recomputing the
// sketch round on the reference CPU backend and comparing the sketch kept with the result
// within a tolerance (CrossCheck); Kept combines both for `fedpipe reproduced --audit`,
// Markdown lays the verdicts out. Unlike package verify, it links the trainer: it is what
// `fedpipe verify --audit` and `fedpipe reproduced --audit` call.
package audit
