// Package summary summarizes stored results; it reads the row types of package results and
// never trains, measures or touches the store, so the stages that write the summaries
// (stages/evaluate_kind.go, stages/shift_kind.go, stages/report_kind.go) and the readers
// that lay them out again (report/site, verify, `fedpipe ls --evals`) share one copy.
//
// Per run (summarize.go): per-client evaluation results — measured by the train stage,
// stages/train/evaluate.go — are summarized two ways, always labelled: the mean ± std over
// clients of per-client accuracy, and the pooled accuracy over all clients' test samples
// (weighted by test size); BestOf and PerRound do the same for each evaluation round of a
// training history. When a run fine-tunes before evaluating (train.finetune_epochs, or a
// method's own fine-tuning), every figure exists twice, as FL-bench logs it: before
// fine-tuning (the model the method holds) and after (Summary.FT; metric names end in
// "_ft").
//
// Across runs (runs.go, cost.go, shift.go): the runs' summaries as a table of one row per
// configuration, seeds folded together (Rows), and of one row per run (Runs), accuracy under
// test-time shifts (ShiftGrids) and cost per client beside FedAvg's (CostGrid).
//
// The report's tables (tables.go) are values in one list, Tables, each built from one Entry
// per run (EntryOf, SetSummary, SetShift): the report stage, the page, its LaTeX and export
// all loop over it, so that adding a table is one function and one list entry
// (docs/layout.md). A metric's value and its test-set interval (metric.go) are read here
// by verify, ls and the page alike.
package summary
