package methods

import (
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

// participationsSlot stores DM-PFL's per-client counts of phase-1 participations in the
// slot "participations": a one-entry tensor "count" per client that has participated
// (nothing before its first).
func participationsSlot(counts []int) train.Slot {
	return train.Slot{Name: "participations", Len: len(counts),
		Get: func(i int) tensor.List {
			if counts[i] == 0 {
				return nil
			}
			return tensor.List{{Name: "count", Shape: []int{1}, Data: []float32{float32(counts[i])}}}
		},
		Set: func(i int, l tensor.List) error {
			counts[i] = 0
			if len(l) > 0 && len(l[0].Data) > 0 {
				counts[i] = int(l[0].Data[0])
			}
			return nil
		}}
}

// readjust counts client c's phase-1 participation in round and reports whether it
// readjusts its mask in it: at every every-th participation of that client (Alg. 1's "if
// readjust masks" inside the client loop), or, with byRound, when round is a multiple of
// every.
func (d *dmpfl) readjust(st *train.State, c, round int) bool {
	n := 1
	if s, ok := st.Method.(*sparseState); ok && s.Participations != nil {
		s.Participations[c]++
		n = s.Participations[c]
	}
	if d.byRound {
		return round%d.every == 0
	}
	return n%d.every == 0
}

// overlapRows is selectionRows for DM-PFL: per tensor, the personalized entries m_c − m_g,
// and |m_c| and |m_c ∩ m_g|.
func overlapRows(round, client int, mc, mg tensor.List) []train.Selection {
	rows := selectionRows(round, client, andNot(mc, mg))
	both := and(mc, mg)
	for i := range rows {
		rows[i].Active, _ = count(tensor.List{mc[i]})
		rows[i].Overlap, _ = count(tensor.List{both[both.Find(mc[i].Name)]})
	}
	return rows
}
