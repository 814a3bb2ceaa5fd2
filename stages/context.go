package stages

import (
	"context"

	"github.com/fedpipe/fedpipe/manifest"
)

// Outputs are a stage's named output blobs; the executor stores each by its digest.
type Outputs = map[string][]byte

// Func runs one stage. It must be a pure function of the context's run, data and inputs:
// the executor caches its outputs under a key computed from exactly those.
type Func func(ctx context.Context, sc Context) (Outputs, error)

// Context is what a running stage sees of the executor: the run it belongs to, its
// inputs' outputs, progress reporting and resume points. The executor's
// pipeline.StageContext implements it; stages never see the graph or the store.
type Context interface {
	// Manifest is the manifest the stage's graph came from.
	Manifest() *manifest.Manifest
	// Run is the grid cell the stage belongs to (nil for the report stage).
	Run() *manifest.Run
	// Runs lists every run the report stage covers (nil for other stages).
	Runs() []*manifest.Run
	// Data describes the run's dataset as planned (nil for the report stage).
	Data() *manifest.DataDesc
	// ShiftFilesDigest is the digest of the real corrupted files a shift stage was planned
	// with, for a dataset that has them (manifest.DatasetDef.RealCorruptions; "" otherwise).
	ShiftFilesDigest() string
	// NumInputs is the number of input stages of kind from (a manifest.Kind*): a
	// stage's inputs are named by their kinds, never by position.
	NumInputs(from string) int
	// Input returns output name (a results.Out* constant) of the stage's input of kind
	// from: a train stage's partition, an evaluate or shift stage's train stage or
	// partition.
	Input(from, name string) ([]byte, error)
	// InputAt returns output name of the stage's i-th input of kind from (the report's
	// evaluations, one per run, and shifts).
	InputAt(from string, i int, name string) ([]byte, error)
	// Progress reports progress within the stage (e.g. rounds done of rounds total).
	Progress(done, total int, note string)
	// Logf prints a message about the stage without disturbing the progress display.
	Logf(format string, args ...any)
	// SaveCheckpoint stores a resume point after round: write passes each of its blobs to
	// put (which stores it at once), and the resume point moves to them when write returns
	// nil.
	SaveCheckpoint(round int, write func(put func(name string, blob []byte) error) error) error
	// LoadCheckpoint returns the latest verified resume point of this stage, if any.
	LoadCheckpoint() (round int, blobs map[string][]byte, ok bool)
	// LoadExtension returns the outputs of the cached train result with the most rounds
	// fewer than this stage's, everything else equal, if any (to extend it).
	LoadExtension() (rounds int, blobs map[string][]byte, ok bool)
	// Resumed records that the stage continued from its checkpoint after round.
	Resumed(round int)
	// PutOutput stores one of the stage's outputs at once, so that a stage with large
	// outputs (every client's model) need not hold them all until it returns. The
	// outputs it returns are stored after these; a name may be given only once in all.
	// The result becomes visible only when the stage returns without error.
	PutOutput(name string, blob []byte) error
}
