package results

import (
	"errors"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
)

// fakeStore is a Store over maps: actions by key, blobs by digest.
type fakeStore struct {
	actions map[artifacts.Digest]artifacts.Action
	blobs   map[artifacts.Digest][]byte
	ioErr   error
}

func (f *fakeStore) GetAction(k artifacts.Digest) (artifacts.Action, bool, error) {
	if f.ioErr != nil {
		return artifacts.Action{}, false, f.ioErr
	}
	a, ok := f.actions[k]
	return a, ok, nil
}

func (f *fakeStore) Get(d artifacts.Digest) ([]byte, error) {
	b, ok := f.blobs[d]
	if !ok {
		return nil, artifacts.ErrNotFound
	}
	return b, nil
}

func TestReadKinds(t *testing.T) {
	table, err := Encode([]Cost{{Client: 3, MBUp: 1.5}}, map[string]string{"m": "v"})
	if err != nil {
		t.Fatal(err)
	}
	key, good, gone, junk := artifacts.Digest{1}, artifacts.Digest{2}, artifacts.Digest{3}, artifacts.Digest{4}
	s := &fakeStore{
		actions: map[artifacts.Digest]artifacts.Action{key: {Outputs: map[string]artifacts.Digest{
			OutTrainCost: good, OutTrainMetrics: gone, OutTrainComm: junk}}},
		blobs: map[artifacts.Digest][]byte{good: table, junk: []byte("not a table")},
	}
	rows, meta, err := Read[Cost](s, key, OutTrainCost)
	if err != nil || len(rows) != 1 || rows[0].Client != 3 || rows[0].MBUp != 1.5 || meta["m"] != "v" {
		t.Fatalf("Read = %+v, %v, %v", rows, meta, err)
	}
	for _, c := range []struct {
		key     artifacts.Digest
		name    string
		kind    error
		missing bool
	}{
		{artifacts.Digest{9}, OutTrainCost, ErrNoAction, true},
		{key, OutTrainSelection, ErrNoOutput, true},
		{key, OutTrainMetrics, ErrBlob, true},
		{key, OutTrainComm, ErrDecode, false},
	} {
		_, _, err := Read[Cost](s, c.key, c.name)
		var re *ReadError
		if !errors.Is(err, c.kind) || !errors.As(err, &re) || Missing(err) != c.missing {
			t.Errorf("Read(%s): %v, want kind %v (missing %v)", c.name, err, c.kind, c.missing)
		}
		for _, other := range []error{ErrNoAction, ErrNoOutput, ErrBlob, ErrDecode} {
			if other != c.kind && errors.Is(err, other) {
				t.Errorf("Read(%s): %v also matches %v", c.name, err, other)
			}
		}
	}
	// A blob's failure keeps its cause, and its message is the cause's.
	_, err = ReadBlob(s, key, OutTrainMetrics)
	if !errors.Is(err, artifacts.ErrNotFound) || err.Error() != artifacts.ErrNotFound.Error() {
		t.Errorf("ReadBlob of a missing blob: %v, want the store's error", err)
	}
	// The store's own failure is none of the kinds.
	s.ioErr = errors.New("disk on fire")
	if _, _, err := Read[Cost](s, key, OutTrainCost); err != s.ioErr || Missing(err) {
		t.Errorf("Read with a failing store: %v", err)
	}
}

func TestTensorOutput(t *testing.T) {
	for name, want := range map[string]bool{
		OutTrainGlobal: true, OutTrainEvalGlobal: true, ClientOutput(ClientPersonal, 3): true,
		ClientOutput(ClientMask, 0): true, ClientOutput(ClientAux+"/momentum", 1): true,
		OutTrainMetrics: false, OutTrainFingerprints: false, OutReportMarkdown: false, "modelx": false,
	} {
		if got := TensorOutput(name); got != want {
			t.Errorf("TensorOutput(%q) = %v, want %v", name, got, want)
		}
	}
	if got := ClientOutput(ClientModel, 7); got != "model/00007" {
		t.Errorf("ClientOutput = %q", got)
	}
}
