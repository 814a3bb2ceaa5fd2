package errs

import (
	"errors"
	"fmt"
	"testing"
)

// A wrapped ErrInvalid is still ErrInvalid, and its text is what exit-2 messages start
// with (pipeline.graph trims "invalid input: " from a stage's error).
func TestErrInvalidWraps(t *testing.T) {
	err := fmt.Errorf("%w: model.init: missing", ErrInvalid)
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("errors.Is(%v, ErrInvalid) = false", err)
	}
	if got, want := err.Error(), "invalid input: model.init: missing"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if errors.Is(errors.New("invalid input"), ErrInvalid) {
		t.Error("another error with the same text matched ErrInvalid")
	}
}
