package train

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/data"
)

// CheckInit checks a run's model.init file against the model the run would build on data
// described by d, as InitialModel would load it: a file that cannot be read, is not
// safetensors, lacks a parameter, holds an unknown one or has a wrong shape is invalid
// input (manifest.ErrInvalid). A run without model.init passes. It is meant for
// pipeline.BuildOptions.CheckInit, so such a file is refused when the manifest is planned,
// before any store or stage exists.
func CheckInit(r *manifest.Run, d *manifest.DataDesc) error {
	if r.Model.Init == "" {
		return nil
	}
	_, err := InitialModel(r, ModelSpec(r, &data.Dataset{Shape: d.Shape, Classes: d.Classes}))
	return err
}
