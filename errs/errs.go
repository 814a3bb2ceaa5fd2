// Package errs holds the errors shared across layers, as a leaf that every package may
// import without reaching up: ErrInvalid, which every error in the user's input wraps.
// cmd/fedpipe maps it to exit code 2 (exitcode.go).
package errs

import "errors"

// ErrInvalid is wrapped (or matched, through an Is method) by every error in the user's
// input: a manifest, a flag, a store path, a data file. errors.Is(err, ErrInvalid) tells
// callers to exit 2. manifest.ErrInvalid is this same value.
var ErrInvalid = errors.New("invalid input")
