package launch

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/manifest"
)

// CellMemoryFactor relates a cell's peak resident memory to manifest.MemoryEstimate, which
// counts the data, two models per client and one batch: methods keep up to three per-client
// copies (FedOBP: the model, its mask and its score average) and the collector lets the
// heap grow past what is live (fedpipe sets GOGC to 50). The largest FMNIST cell (FedOBP Table 6, 100
// clients) peaked at 2.4 times its estimate (1,698 MiB against 720 MiB; docs/performance.md,
// "Memory"); 3 leaves headroom for the collector's timing.
const CellMemoryFactor = 3.0

// MinWorkerMemory is the least memory a worker is given: the Go runtime, Badger's tables
// and a small run's data.
const MinWorkerMemory = 1 << 30

// CellMemory returns the memory a worker needs to run any cell of m, as a whole number of
// GiB in Kubernetes' notation, and a line saying how it was derived: the largest cell's
// estimate times CellMemoryFactor, at least MinWorkerMemory.
func CellMemory(m *manifest.Manifest) (string, string, error) {
	runs, err := m.Expand()
	if err != nil {
		return "", "", err
	}
	var largest *manifest.Run
	est := 0.0
	for i := range runs {
		if e := manifest.MemoryEstimate(&runs[i]); largest == nil || e > est {
			largest, est = &runs[i], e
		}
	}
	if largest == nil {
		return "", "", fmt.Errorf("the manifest has no runs")
	}
	need := math.Max(est*CellMemoryFactor, MinWorkerMemory)
	gib := int(math.Ceil(need / (1 << 30)))
	note := fmt.Sprintf("Memory per worker: %dGi, fedpipe's estimate for the largest cell (%s, %s) times %g for per-client copies and collector headroom; give --memory to change it",
		gib, largest.Label(), manifest.FormatBytes(est), CellMemoryFactor)
	return fmt.Sprintf("%dGi", gib), note, nil
}
