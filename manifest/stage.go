package manifest

import "errors"

// DataDesc is what the graph needs to know of a dataset before any stage runs.
type DataDesc struct {
	// Digest identifies the data's content: the SHA-256 of the raw files, or of the
	// generator's version and parameters for synthetic data.
	Digest string
	// Shape is one sample's shape (NHWC without N for images).
	Shape []int
	// Classes is the number of labels.
	Classes int
	// Samples is the number of samples before any max_samples subset.
	Samples int
	// Source says where the data was found (a path), for messages; not part of keys.
	Source string
}

// The stage kinds a manifest expands into. Each run of the grid becomes a partition, a
// train and an evaluate stage (and a shift stage when the manifest has a shift block); one
// report stage covers all runs.
const (
	KindPartition = "partition"
	KindTrain     = "train"
	KindEvaluate  = "evaluate"
	KindReport    = "report"
	KindShift     = "shift"
)

// IsInvalid reports whether err is the user's input error (exit code 2).
func IsInvalid(err error) bool { return errors.Is(err, ErrInvalid) }
