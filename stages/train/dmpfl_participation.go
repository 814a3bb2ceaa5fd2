package train

import "github.com/fedpipe/fedpipe/artifacts/tensor"

// participationsAux names the State.Aux entry of DM-PFL that counts each client's phase-1
// participations (a one-entry tensor per client; nil before its first).
const participationsAux = "participations"

// readjust counts client c's phase-1 participation in round and reports whether it
// readjusts its mask in it: at every every-th participation of that client (Alg. 1's "if
// readjust masks" inside the client loop), or, with byRound, when round is a multiple of
// every.
func (d *dmpfl) readjust(st *State, c, round int) bool {
	n := 1
	if p := st.Aux[participationsAux]; p != nil {
		if len(p[c]) > 0 && len(p[c][0].Data) > 0 {
			n = int(p[c][0].Data[0]) + 1
		}
		p[c] = tensor.List{{Name: "count", Shape: []int{1}, Data: []float32{float32(n)}}}
	}
	if d.byRound {
		return round%d.every == 0
	}
	return n%d.every == 0
}

// overlapRows is selectionRows for DM-PFL: per tensor, the personalized entries m_c − m_g,
// and |m_c| and |m_c ∩ m_g|.
func overlapRows(round, client int, mc, mg tensor.List) []Selection {
	rows := selectionRows(round, client, andNot(mc, mg))
	both := and(mc, mg)
	for i := range rows {
		rows[i].Active, _ = count(tensor.List{mc[i]})
		rows[i].Overlap, _ = count(tensor.List{both[both.Find(mc[i].Name)]})
	}
	return rows
}
