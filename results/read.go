package results

import (
	"errors"

	"github.com/fedpipe/fedpipe/artifacts"
)

// Store is what reading a stage's outputs needs of the content store and action cache
// (artifacts.Store).
type Store interface {
	// GetAction returns the action recorded under key; ok is false when there is none
	// usable (see artifacts.Store.GetAction).
	GetAction(key artifacts.Digest) (a artifacts.Action, ok bool, err error)
	// Get returns the verified bytes of a blob.
	Get(d artifacts.Digest) ([]byte, error)
}

// The ways reading a stage's output can find nothing to read, each matched with
// errors.Is against the *ReadError the readers return. Any other error (the store's own
// I/O failure) is returned as it is.
var (
	// ErrNoAction: no usable result is recorded under the stage's key (it never ran, or a
	// recorded output fails its digest check, which the action cache treats as a miss).
	ErrNoAction = errors.New("no result recorded")
	// ErrNoOutput: the result has no output of that name (a result made before the stage
	// wrote it, or a stage that writes it only sometimes).
	ErrNoOutput = errors.New("no such output")
	// ErrBlob: the output's blob is missing from the store or fails its digest check.
	ErrBlob = errors.New("output blob missing or damaged")
	// ErrDecode: the blob was read but is not a table of the row type asked for.
	ErrDecode = errors.New("output does not decode")
)

// ReadError is why an output could not be read: Kind is one of ErrNoAction, ErrNoOutput,
// ErrBlob and ErrDecode, Output the output's name, Err the underlying failure (nil for
// ErrNoAction and ErrNoOutput). Its message is Err's where there is one, so that a caller
// wraps it in its own words; errors.Is matches both Kind and Err.
type ReadError struct {
	Output string
	Kind   error
	Err    error
}

func (e *ReadError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return "output " + e.Output + ": " + e.Kind.Error()
}

// Is reports whether target is the error's kind.
func (e *ReadError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying failure.
func (e *ReadError) Unwrap() error { return e.Err }

// Missing reports whether err says that there is nothing to read (ErrNoAction,
// ErrNoOutput or ErrBlob) rather than something wrong with what was read or with the
// store: the readers that show a result as not computed treat these alike.
func Missing(err error) bool {
	return errors.Is(err, ErrNoAction) || errors.Is(err, ErrNoOutput) || errors.Is(err, ErrBlob)
}

// Action returns the action recorded under key, or a *ReadError of kind ErrNoAction.
func Action(s Store, key artifacts.Digest) (artifacts.Action, error) {
	a, ok, err := s.GetAction(key)
	if err != nil {
		return artifacts.Action{}, err
	}
	if !ok {
		return artifacts.Action{}, &ReadError{Kind: ErrNoAction}
	}
	return a, nil
}

// Blob returns the bytes of output name of action a, or a *ReadError of kind ErrNoOutput
// or ErrBlob.
func Blob(s Store, a artifacts.Action, name string) ([]byte, error) {
	d, ok := a.Outputs[name]
	if !ok {
		return nil, &ReadError{Output: name, Kind: ErrNoOutput}
	}
	b, err := s.Get(d)
	if err != nil {
		return nil, &ReadError{Output: name, Kind: ErrBlob, Err: err}
	}
	return b, nil
}

// ReadFrom decodes output name of action a as a table of T, with its metadata; its
// errors are Blob's, or a *ReadError of kind ErrDecode.
func ReadFrom[T any](s Store, a artifacts.Action, name string) ([]T, map[string]string, error) {
	b, err := Blob(s, a, name)
	if err != nil {
		return nil, nil, err
	}
	return decodeOutput[T](b, name)
}

// Read decodes output name of the result recorded under key as a table of T, with its
// metadata: the one read of a stored table (action, output, blob, rows). Its errors are
// Action's and ReadFrom's.
func Read[T any](s Store, key artifacts.Digest, name string) ([]T, map[string]string, error) {
	a, err := Action(s, key)
	if err != nil {
		return nil, nil, err
	}
	return ReadFrom[T](s, a, name)
}

// ReadBlob returns the bytes of output name of the result recorded under key (an output
// that is no table); its errors are Action's and Blob's.
func ReadBlob(s Store, key artifacts.Digest, name string) ([]byte, error) {
	a, err := Action(s, key)
	if err != nil {
		return nil, err
	}
	return Blob(s, a, name)
}

// decodeOutput decodes b, output name, as rows of T.
func decodeOutput[T any](b []byte, name string) ([]T, map[string]string, error) {
	rows, meta, err := Decode[T](b)
	if err != nil {
		return nil, nil, &ReadError{Output: name, Kind: ErrDecode, Err: err}
	}
	return rows, meta, nil
}
