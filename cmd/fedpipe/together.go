package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/train"
)

// defaultDeviceGiB is the device memory assumed when $FEDPIPE_DEVICE_GIB does not say: the
// smallest GPU fedpipe expects to run on.
const defaultDeviceGiB = 16

// togetherFor resolves run's --together and --lockstep for a plan on backend: how many
// stages run at the same time, whether their clients share lockstep steps (a train.Hub),
// and a line saying so ("" when one run at a time, as before).
func (c *commonFlags) togetherFor(plan []pipeline.PlanEntry, backend string) (int, bool, string, error) {
	var runs []*manifest.Run
	for _, p := range plan {
		if p.State != pipeline.StateCached && p.Node.Kind == manifest.KindTrain && p.Node.Run != nil {
			runs = append(runs, p.Node.Run)
		}
	}
	var hub bool
	switch c.lockstep {
	case "auto", "":
		hub = train.LockstepDefault(backend)
	case "on":
		hub = true
	case "off":
	default:
		return 0, false, "", fmt.Errorf("--lockstep %q: want auto, on or off", c.lockstep)
	}
	if c.together < 0 {
		return 0, false, "", fmt.Errorf("--together %d: want a number of runs ≥ 1 (0: the default)", c.together)
	}
	n, why := c.together, "--together"
	if n == 0 {
		gib := float64(defaultDeviceGiB)
		if v, err := strconv.ParseFloat(os.Getenv("FEDPIPE_DEVICE_GIB"), 64); err == nil && v > 0 {
			gib = v
		}
		n, why = train.DefaultTogether(runs, backend, manifest.MachineMemory(), gib*(1<<30))
	}
	if n <= 1 || len(runs) <= 1 {
		return max(n, 1), hub, "", nil
	}
	line := fmt.Sprintf("%d of %d runs train together (%s)", min(n, len(runs)), len(runs), why)
	if hub {
		line += ", their clients in lockstep"
	}
	return n, hub, line, nil
}
