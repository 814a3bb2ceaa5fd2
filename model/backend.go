package model

import (
	"github.com/fedpipe/fedpipe/gomlx"
)

// CPUBackend is the name of the default backend, "fpfast" (gomlx.CPU).
const CPUBackend = gomlx.CPU

// OracleBackend is the name of the reference CPU backend, "fpcpu" (gomlx.Oracle). Tests
// compare CPUBackend against it.
const OracleBackend = gomlx.Oracle

// XLACompiled reports whether this binary carries GoMLX's XLA backend (build tag xla).
const XLACompiled = gomlx.XLACompiled

// CodeVersion is bumped whenever a change in this package (graph construction, backend
// lowering, initialization) may change numeric results. It is part of BackendID, so cached
// results computed by an older version are never reused.
const CodeVersion = "fpgraph-4" // 4: convolution rows window by window (max-pooling is one ArgMax), which reorders the weight-gradient and col2im sums; 3: col2im is one ScatterSum

// LockstepCodeVersion is bumped whenever the lockstep graphs (multi.go) change in a way
// that may change results on a backend that trains in lockstep (XLA; on fpfast lockstep gives
// the bits of one client after another, and runs do not use it). It is part of the XLA
// backends' ids.
const LockstepCodeVersion = "lockstep-3" // 3: col2im a Gather and a ReduceSum, no ScatterSum (multiCol2im with gather); 2: im2col, col2im and pooling constants of one client's batch, not all clients'

// XLAGraphVersion is bumped whenever the graphs built for the XLA backends alone (not fpfast's
// or fpcpu's) change in a way that may change results on them, single-client graphs included.
// Like LockstepCodeVersion it is part of the XLA backends' ids only, so fpfast's and fpcpu's
// ids and cached results are unaffected.
const XLAGraphVersion = "xlagraph-1" // 1: convolutions and max-pooling as XLA's own convolution and reduce-window ops and their gradients (native.go), not im2col

// graphVersions are this package's versions as backend ids carry them.
var graphVersions = gomlx.GraphVersions{Graph: CodeVersion, Lockstep: LockstepCodeVersion, XLAGraph: XLAGraphVersion}

// usesXLA reports whether a backend configuration (as NewModel takes it) is one of the XLA
// backends, whose convolution layers take the native form (native.go) and whose lockstep
// graphs, in the im2col form, take col2im without a scatter (multiCol2im with gather).
func usesXLA(config string) bool { return gomlx.UsesXLA(config) }

// ResolveBackend picks the backend configuration to use: flag if non-empty, else
// $GOMLX_BACKEND, else CPUBackend (gomlx.Resolve, which says what it accepts). It never
// downloads anything.
func ResolveBackend(flag string) (string, error) { return gomlx.Resolve(flag) }

// BackendID returns a stable identity string for results computed with the backend
// configuration name (as returned by ResolveBackend) by this package's graphs: it names the
// GoMLX version, the backend, CodeVersion (and, on XLA, LockstepCodeVersion and
// XLAGraphVersion) and the dtype, and is meant to go into cache keys (gomlx.ID).
func BackendID(name string) string { return gomlx.ID(name, graphVersions) }

// CurrentBackendID is the id this code gives the backend that made a result recorded with
// backend id recorded (gomlx.CurrentID with this package's versions): a kept result is
// stale when the code that computes on its backend changed, never only because this machine
// runs another backend.
func CurrentBackendID(recorded string) string { return gomlx.CurrentID(recorded, graphVersions) }

// BackendHere says which backend configuration of this machine computes the results of
// backend id (as BackendID gives it) bit for bit, or "" and why none does (gomlx.Here).
func BackendHere(id string) (config, why string) { return gomlx.Here(id, graphVersions) }

// SingleThreaded returns the configuration of backend with each op on one goroutine, for
// models that run side by side, one per core; false for a backend that cannot
// (gomlx.SingleThreaded).
func SingleThreaded(backend string) (string, bool) { return gomlx.SingleThreaded(backend) }

// CheckBackendName reports whether config names a known backend, without looking for
// plugins or parsing options (gomlx.CheckName).
func CheckBackendName(config string) error { return gomlx.CheckName(config) }
