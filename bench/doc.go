// Package bench is what `fedpipe bench` measures and prints: a model's training and
// inference throughput on a backend beside PyTorch's on the same shapes (Steps), one
// federated round of a published setting beside the PyTorch reference round with the
// projected wall time of a table cell (Round), and that round without and with the progress
// journal a train stage publishes (Journal). Each GEMM kernel asked for is timed in one
// invocation, in mirrored order (UseKernels, kernelOrder).
//
// Its figures are valid only on an otherwise idle machine; it prints the load before and
// after. Errors in the options given match errs.ErrInvalid (the command's exit code 2).
package bench

import (
	"fmt"

	"github.com/fedpipe/fedpipe/errs"
)

// invalidError is an error in the options given (an unknown setting or kernel, a bad
// shape): errors.Is(err, errs.ErrInvalid) holds for it.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }

// Is makes invalidError an errs.ErrInvalid.
func (e *invalidError) Is(target error) bool { return target == errs.ErrInvalid }

// invalidf is an invalidError formatted as fmt.Sprintf does.
func invalidf(format string, a ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, a...)}
}
