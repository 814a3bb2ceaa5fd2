package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/osfile"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/train"
)

// fmtSeconds prints a duration as seconds with one decimal ("12.3s").
func fmtSeconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// writeJSON prints v as indented JSON; it fails (exit 1) only where stdout does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitErr(exitFailure)
	}
	return nil
}

// loadGraph reads a manifest, resolves the backend and builds the stage graph. It touches
// no store, so invalid input is reported before anything is written.
func loadGraph(path string, loader *data.Loader, backendFlag string) (*pipeline.Graph, string, error) {
	return loadGraphSet(path, nil, loader, backendFlag)
}

// loadGraphSet is loadGraph with --set overrides applied to the manifest, checked against
// the command's limits (--max-cells, --max-rounds, --max-clients).
func loadGraphSet(path string, sets []string, loader *data.Loader, backendFlag string) (*pipeline.Graph, string, error) {
	m, err := manifest.LoadManifestOptions(path, manifest.Options{Overrides: sets, Limits: manifestLimits})
	if err != nil {
		return nil, "", err
	}
	backend, err := model.ResolveBackend(backendFlag)
	if err != nil {
		return nil, "", &manifest.InputError{File: "--backend", Msg: err.Error()}
	}
	if err := checkDatasetPath(m); err != nil {
		return nil, "", err
	}
	g, err := pipeline.Build(m, pipeline.BuildOptions{Describe: loader.Describe, ShiftFiles: loader.ShiftFiles,
		CheckInit: train.CheckInit, Backend: model.BackendID(backend)})
	return g, backend, err
}

// buildGraph is loadGraphSet for a backend given by its id (model.BackendID) rather than
// a configuration: the graph whose keys a result made on that backend has, which need not
// be a backend this machine can run (a kept GPU result read on a CPU).
func buildGraph(path string, sets []string, loader *data.Loader, backendID string) (*pipeline.Graph, error) {
	m, err := manifest.LoadManifestOptions(path, manifest.Options{Overrides: sets, Limits: manifestLimits})
	if err != nil {
		return nil, err
	}
	return pipeline.Build(m, pipeline.BuildOptions{Describe: loader.Describe, ShiftFiles: loader.ShiftFiles,
		CheckInit: train.CheckInit, Backend: backendID})
}

// checkDatasetPath refuses, at the manifest's dataset.path, a path that exists but is no
// directory (a file, a FIFO, or a path through a file) or loops through symbolic links:
// invalid input (exit 2), where reading the dataset later failed with exit 1 and no
// location. A path that does not exist is left to the loader, which says where it looked.
func checkDatasetPath(m *manifest.Manifest) error {
	p := m.Dataset.Path
	if p == "" {
		return nil
	}
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		return m.ErrAt("dataset.path", "%s: a part of the path is a file, not a directory; dataset.path names the directory holding the dataset's files", p)
	case errors.Is(err, syscall.ELOOP):
		return m.ErrAt("dataset.path", "%s: a loop of symbolic links; dataset.path names the directory holding the dataset's files", p)
	case err == nil && !st.IsDir():
		return m.ErrAt("dataset.path", "%s is %s, not a directory; dataset.path names the directory holding the dataset's files", p, osfile.Kind(st.Mode()))
	}
	return nil
}
