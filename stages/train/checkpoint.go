package train

import (
	"fmt"
	"strconv"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/results"
)

// MethodState is a method's own state carried from round to round beyond State's Global,
// Personal and Masks: a struct of typed fields declared in the method's file, set by its
// Init. Slots says how a checkpoint stores it.
type MethodState interface {
	// Slots lists the state's tensor lists by name. EncodeState saves them; DecodeState
	// fills them back into the state the method's Init made.
	Slots() []Slot
}

// Slot is one named sequence of tensor lists of a MethodState (one per client, or a fixed
// number), stored in checkpoints as the blobs "aux/<Name>/NNNNN", one per index whose list
// is not nil.
type Slot struct {
	Name string
	Len  int
	// Get returns list i (nil: nothing to store).
	Get func(i int) tensor.List
	// Set puts back list i read from a checkpoint.
	Set func(i int, l tensor.List) error
	// Drop, where set, lets list i go once MoveState has encoded it.
	Drop func(i int)
}

// ListsSlot is the Slot of a slice of tensor lists stored as they are; Set writes into
// lists itself.
func ListsSlot(name string, lists []tensor.List) Slot {
	return Slot{Name: name, Len: len(lists),
		Get:  func(i int) tensor.List { return lists[i] },
		Set:  func(i int, l tensor.List) error { lists[i] = l; return nil },
		Drop: func(i int) { lists[i] = nil }}
}

// ListSlot is the Slot of a single tensor list (index 0).
func ListSlot(name string, list *tensor.List) Slot {
	return Slot{Name: name, Len: 1,
		Get:  func(int) tensor.List { return *list },
		Set:  func(_ int, l tensor.List) error { *list = l; return nil },
		Drop: func(int) { *list = nil }}
}

// bnSlot names the slot of State.BN in checkpoints.
const bnSlot = "bn"

// slots lists every checkpointed slot of the state: the method's and the BatchNorm
// tensors'.
func (st *State) slots() []Slot {
	var out []Slot
	if st.Method != nil {
		out = st.Method.Slots()
	}
	if st.BN != nil {
		out = append(out, ListsSlot(bnSlot, st.BN))
	}
	return out
}

// EncodeState turns a training state into named blobs: a checkpoint, and the bulk of a
// train stage's outputs. Per-client tensors a method has not set are left out.
func EncodeState(st *State) (map[string][]byte, error) {
	return collect(st, WriteState)
}

// collect runs write and returns the blobs it passes, by name.
func collect(st *State, write func(*State, func(string, []byte) error) error) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := write(st, func(name string, b []byte) error {
		out[name] = b
		return nil
	})
	return out, err
}

// WriteState is EncodeState passing each blob to put as soon as it is encoded, so that a
// caller storing them holds one client's blob at a time rather than a second copy of the
// whole state (100 FedOBP clients: about 700 MB).
func WriteState(st *State, put func(name string, b []byte) error) error {
	return writeState(st, put, false)
}

// MoveState is WriteState dropping each client's personal model and mask, and each list of
// the method's slots that can be dropped (Slot.Drop), from st once it is encoded, so that
// the state shrinks as its encoding grows: for a train stage's outputs,
// after which st is not used.
func MoveState(st *State, put func(name string, b []byte) error) error {
	return writeState(st, put, true)
}

// writeState is WriteState, with release: MoveState.
func writeState(st *State, put func(name string, b []byte) error, release bool) error {
	if err := put(results.OutTrainGlobal, tensor.Encode(st.Global)); err != nil {
		return err
	}
	for c, p := range st.Personal {
		if p != nil {
			if err := put(results.ClientOutput(results.ClientPersonal, c), tensor.Encode(p)); err != nil {
				return err
			}
			if release {
				st.Personal[c] = nil
			}
		}
	}
	for c, m := range st.Masks {
		if m != nil {
			b := tensor.Bundle{}
			for _, t := range m {
				b.Masks = append(b.Masks, tensor.MaskOf(t))
			}
			if err := put(results.ClientOutput(results.ClientMask, c), tensor.EncodeBundle(b)); err != nil {
				return err
			}
			if release {
				st.Masks[c] = nil
			}
		}
	}
	for _, s := range st.slots() {
		for i := 0; i < s.Len; i++ {
			if l := s.Get(i); l != nil {
				if err := put(results.ClientOutput(results.ClientAux+"/"+s.Name, i), tensor.Encode(l)); err != nil {
					return err
				}
				if release && s.Drop != nil {
					s.Drop(i)
				}
			}
		}
	}
	if len(st.Fingerprints) > 0 {
		if err := put(results.OutTrainFingerprints, EncodeFingerprints(st.Fingerprints)); err != nil {
			return err
		}
	}
	if st.Sketch != nil {
		b, err := EncodeSketch(st.Sketch)
		if err != nil {
			return err
		}
		if err := put(results.OutTrainSketch, b); err != nil {
			return err
		}
	}
	table := func(name string, b []byte, err error) error {
		if err != nil {
			return err
		}
		return put(name, b)
	}
	b, err := results.Encode(st.Metrics, map[string]string{"round": strconv.Itoa(st.Round)})
	if err := table(results.OutTrainMetrics, b, err); err != nil {
		return err
	}
	// Only methods that select (masks) have a selection table; others wrote an empty one.
	if st.Masks != nil || len(st.Selection) > 0 {
		b, err := results.Encode(st.Selection, nil)
		if err := table(results.OutTrainSelection, b, err); err != nil {
			return err
		}
	}
	b, err = results.Encode(st.Comm, nil)
	if err := table(results.OutTrainComm, b, err); err != nil {
		return err
	}
	b, err = results.Encode(st.Work, nil)
	return table(results.OutTrainWork, b, err)
}

// DecodeState reverses EncodeState (and EncodeCheckpoint) for a run of method m (as
// NewRunMethod builds it), whose Init lays out the state the blobs fill.
func DecodeState(blobs map[string][]byte, clients int, m Method) (*State, error) {
	st := &State{}
	var err error
	if st.Global, err = tensor.Decode(blobs[results.OutTrainGlobal]); err != nil {
		return nil, err
	}
	// The method's own Init says which per-client slots exist; fill them from the blobs.
	m.Init(st, clients)
	for c := range st.Personal {
		st.Personal[c] = nil
		if b, ok := blobs[results.ClientOutput(results.ClientPersonal, c)]; ok {
			if st.Personal[c], err = tensor.Decode(b); err != nil {
				return nil, err
			}
		}
	}
	for c := range st.Masks {
		st.Masks[c] = nil
		if b, ok := blobs[results.ClientOutput(results.ClientMask, c)]; ok {
			bundle, err := tensor.DecodeBundle(b)
			if err != nil {
				return nil, err
			}
			for _, mk := range bundle.Masks {
				st.Masks[c] = append(st.Masks[c], mk.Tensor())
			}
		}
	}
	for _, s := range st.slots() {
		for i := 0; i < s.Len; i++ {
			if b, ok := blobs[results.ClientOutput(results.ClientAux+"/"+s.Name, i)]; ok {
				l, err := tensor.Decode(b)
				if err != nil {
					return nil, err
				}
				if err := s.Set(i, l); err != nil {
					return nil, fmt.Errorf("checkpoint blob %s: %w", results.ClientOutput(results.ClientAux+"/"+s.Name, i), err)
				}
			}
		}
	}
	if st.Fingerprints, err = DecodeFingerprints(blobs[results.OutTrainFingerprints]); err != nil {
		return nil, err
	}
	if b, ok := blobs[results.OutTrainSketch]; ok {
		if st.Sketch, err = DecodeSketch(b); err != nil {
			return nil, err
		}
	}
	if _, chunked := blobs[checkpointRoundBlob]; chunked {
		err = readChunks(blobs, st)
	} else {
		err = decodeTables(blobs, st)
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// decodeTables reads the whole per-round tables EncodeState wrote, and the round.
func decodeTables(blobs map[string][]byte, st *State) error {
	var meta map[string]string
	var err error
	if st.Metrics, meta, err = results.Decode[results.Metric](blobs[results.OutTrainMetrics]); err != nil {
		return err
	}
	if st.Round, err = strconv.Atoi(meta["round"]); err != nil {
		return fmt.Errorf("checkpoint has no round")
	}
	if b, ok := blobs[results.OutTrainSelection]; ok {
		if st.Selection, _, err = results.Decode[results.Selection](b); err != nil {
			return err
		}
	}
	if st.Comm, _, err = results.Decode[results.Comm](blobs[results.OutTrainComm]); err != nil {
		return err
	}
	if b, ok := blobs[results.OutTrainWork]; ok {
		if st.Work, _, err = results.Decode[results.Work](b); err != nil {
			return err
		}
	}
	return nil
}
