// Command fedpipe runs personalized-federated-learning experiments described by a manifest
// as a cached DAG of stages. See README.md.
package main

import (
	"os"
	"runtime/debug"

	"github.com/fedpipe/fedpipe/gomlx"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/pipeline/memlimit"
	"github.com/fedpipe/fedpipe/stages"
)

// The executor's context is what the stage implementations are written against.
var _ stages.Context = (*pipeline.StageContext)(nil)

func main() {
	setGCPercent()
	memlimit.Apply()
	gomlx.ReexecForXLA(os.Args[1:])
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// gcPercent is Go's GOGC for fedpipe unless the environment sets one: a collection when the
// heap has grown by half (Go's default: doubled) over what survived the last. A federated
// run's heap is mostly long-lived (the dataset, every client's models), so the default let a
// 100-client FedOBP run reach about twice its live heap in resident memory; half that growth
// costs a few more collections of little garbage.
const gcPercent = 50

// setGCPercent applies gcPercent unless $GOGC is set.
func setGCPercent() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
