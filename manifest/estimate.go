package manifest

// The memory estimate: a run's peak memory and its lock-step device memory, from what
// the dataset's def says of a sample's size and counts, before any file is read.

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/model/arch"
)

// sampleDims returns the float32 values of one sample of the run's dataset, and an image's
// side and channels (0 for flat features), as its def knows them before any file is read.
func sampleDims(r *Run) (dim float64, side int, channels int) {
	ds := r.Dataset
	def := datasetDef(ds.Name)
	if !def.Image {
		f := def.Features
		if f == 0 {
			f = ds.Features
		}
		return float64(f), 0, 0
	}
	s := def.Side
	if def.Resize && ds.ImageSize != 0 {
		s = ds.ImageSize
	}
	return float64(s * s * def.Channels), s, def.Channels
}

// knownClasses is the run's class count as known before loading: a generated dataset's
// dataset.classes, else its variant's count (0: unknown).
func knownClasses(r *Run) int {
	def := datasetDef(r.Dataset.Name)
	if def.Generated {
		return r.Dataset.Classes
	}
	return def.Variants[r.Dataset.Variant].Classes
}

// paramCount estimates the model's parameter count (arch.ParamCount).
func paramCount(r *Run, dim float64, side, channels, classes int) float64 {
	return arch.ParamCount(r.Model.Arch, dim, side, channels, classes, r.Model.Hidden)
}

// MemoryEstimate estimates a run's peak memory in bytes: the pooled data as float32 (and
// a quarter more for the raw files), a model per client plus the server's and the optimizer's copies, and
// one mini-batch's activations and gradients. It is an order of magnitude, meant to refuse
// what cannot fit, not to predict usage.
func MemoryEstimate(r *Run) float64 {
	dim, side, channels := sampleDims(r)
	def := datasetDef(r.Dataset.Name)
	n, classes := float64(def.Variants[r.Dataset.Variant].Samples), knownClasses(r)
	if def.Generated {
		n = float64(r.Dataset.Devices) * def.DeviceSamples
	}
	if r.Dataset.MaxSamples > 0 {
		n = math.Min(n, float64(r.Dataset.MaxSamples))
	}
	if classes == 0 {
		classes = 100
	}
	params := paramCount(r, dim, side, channels, classes)
	clients := float64(max(r.Partition.Clients, 1))
	batch := float64(r.Train.BatchSize)
	return 4 * (1.25*n*dim + params*(2*clients+4) + batch*activations(r, dim, classes))
}

// activations is the order of magnitude of one sample's activations and their gradients
// (floats) in a training step.
func activations(r *Run, dim float64, classes int) float64 {
	act := dim * 64 // conv feature maps, their gradients and BatchNorm intermediates
	switch r.Model.Arch {
	case arch.ResNet18:
		act = dim * 512 // no down-sampling stem: 64 channels at full resolution
	case arch.ResNet18ImageNet:
		act = dim * 32
	case arch.MLP, arch.LogReg:
		act = dim + float64(classes)
		for _, h := range r.Model.Hidden {
			act += float64(h)
		}
		act *= 4
	}
	return act
}

// LockstepEstimate estimates, in bytes, a run's device memory when its clients train in one
// compiled step (on XLA): every client at once (an evaluation fine-tunes all of them), each
// with its parameters, momentum and a batch's activations. An order of magnitude, as
// MemoryEstimate.
func LockstepEstimate(r *Run) float64 {
	dim, side, channels := sampleDims(r)
	classes := knownClasses(r)
	if classes == 0 {
		classes = 100
	}
	params := paramCount(r, dim, side, channels, classes)
	clients := float64(max(r.Partition.Clients, 1))
	return 4 * clients * (3*params + float64(r.Train.BatchSize)*activations(r, dim, classes))
}

// estimateParts says what the estimate is made of, for the error message.
func estimateParts(r *Run) string {
	return fmt.Sprintf("model %s, batch_size %d, %d clients, dataset %s", r.Model.Arch, r.Train.BatchSize, r.Partition.Clients, r.Dataset.Name)
}
