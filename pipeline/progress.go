package pipeline

import "time"

// Progress receives stage lifecycle events. Implementations must be safe for use by one
// stage at a time (the executor runs stages sequentially).
type Progress interface {
	StageStart(index, total int, name string)
	Step(name string, done, total int, note string)
	StageEnd(name string, d time.Duration, err error)
	Logf(format string, args ...any)
}

// Quiet is a Progress that shows nothing.
type Quiet struct{}

// StageStart does nothing.
func (Quiet) StageStart(int, int, string) {}

// Step does nothing.
func (Quiet) Step(string, int, int, string) {}

// StageEnd does nothing.
func (Quiet) StageEnd(string, time.Duration, error) {}

// Logf does nothing.
func (Quiet) Logf(string, ...any) {}
