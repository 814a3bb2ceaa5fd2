package main

import (
	"io"

	"github.com/fedpipe/fedpipe/live/progress"
	"github.com/fedpipe/fedpipe/pipeline"
)

// newProgress is run's display of its stages (live/progress): a bar on a terminal, lines
// otherwise, nothing when quiet.
func newProgress(w io.Writer, quiet bool) pipeline.Progress { return progress.New(w, quiet) }
