// Package pipeline turns a manifest (package manifest) into a DAG of content-addressed
// stages and runs it: the stage graph, stage keys (keys.go holds every key-field map), the
// planner that says why each stage runs, the executor with its checkpoints, and store
// maintenance. Stage implementations are plugged in as StageFuncs; a terminal display
// is plugged in as a Progress.
package pipeline
