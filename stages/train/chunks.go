package train

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/fedpipe/fedpipe/results"
)

// checkpointChunkRounds is how many rounds of per-round rows (metrics, selection,
// communication, work) one checkpoint chunk holds.
//
// A checkpoint stores those rows in chunks of whole rounds, each chunk one blob: a chunk
// whose rounds are all done encodes to the same bytes at every later checkpoint, so the
// store keeps it once, and each checkpoint adds only its models and its last, partial chunk.
// The store then grows linearly with the rounds (re-storing whole tables at every checkpoint
// grew it with their square). The chunk list in the checkpoint's index still grows, by one
// entry (about 90 bytes) per checkpointChunkRounds rounds.
const checkpointChunkRounds = 10

// checkpointRoundBlob names the blob holding a chunked checkpoint's round; its presence
// marks the chunked layout.
const checkpointRoundBlob = "round"

// tableNames are the per-round tables of a state, in the order a chunk holds them.
var tableNames = []string{results.OutTrainMetrics, results.OutTrainSelection, results.OutTrainComm, results.OutTrainWork}

// chunkName names the blob of chunk k.
func chunkName(k int) string { return fmt.Sprintf("rows/%06d", k) }

// EncodeCheckpoint is EncodeState for a resume point: the same blobs, except the per-round
// tables, which are cut into chunks of checkpointChunkRounds rounds (see there). The rows of
// every table must come in non-decreasing round order, as Run appends them; otherwise the
// tables are stored whole, as EncodeState does. DecodeState reads both layouts (readChunks).
func EncodeCheckpoint(st *State) (map[string][]byte, error) {
	return collect(st, WriteCheckpoint)
}

// WriteCheckpoint is EncodeCheckpoint passing each blob to put as soon as it is encoded (see
// WriteState).
func WriteCheckpoint(st *State, put func(name string, b []byte) error) error {
	chunk := func(round int) int { return max(round-1, 0) / checkpointChunkRounds }
	last := chunk(st.Round)
	sorted := true
	check := func(rounds []int) {
		prev := -1
		for _, r := range rounds {
			if chunk(r) < prev || chunk(r) > last {
				sorted = false
			}
			prev = chunk(r)
		}
	}
	check(roundsOf(st.Metrics, func(m Metric) int { return m.Round }))
	check(roundsOf(st.Selection, func(s Selection) int { return s.Round }))
	check(roundsOf(st.Comm, func(c Comm) int { return c.Round }))
	check(roundsOf(st.Work, func(w Work) int { return w.Round }))
	if !sorted {
		return WriteState(st, put)
	}
	models := *st
	models.Metrics, models.Selection, models.Comm, models.Work = nil, nil, nil, nil
	err := WriteState(&models, func(name string, b []byte) error {
		if slices.Contains(tableNames, name) {
			return nil // the tables go in chunks below
		}
		return put(name, b)
	})
	if err != nil {
		return err
	}
	if err := put(checkpointRoundBlob, []byte(strconv.Itoa(st.Round))); err != nil {
		return err
	}
	var mi, si, ci, wi int
	for k := 0; k <= last; k++ {
		// The chunk's rows: every row whose round falls in chunk k (and, in chunk 0, round 0).
		part := &State{Round: (k + 1) * checkpointChunkRounds}
		for ; mi < len(st.Metrics) && chunk(st.Metrics[mi].Round) == k; mi++ {
			part.Metrics = append(part.Metrics, st.Metrics[mi])
		}
		for ; si < len(st.Selection) && chunk(st.Selection[si].Round) == k; si++ {
			part.Selection = append(part.Selection, st.Selection[si])
		}
		for ; ci < len(st.Comm) && chunk(st.Comm[ci].Round) == k; ci++ {
			part.Comm = append(part.Comm, st.Comm[ci])
		}
		for ; wi < len(st.Work) && chunk(st.Work[wi].Round) == k; wi++ {
			part.Work = append(part.Work, st.Work[wi])
		}
		tables, err := EncodeState(part)
		if err != nil {
			return err
		}
		var b []byte
		for _, name := range tableNames {
			// A table EncodeState leaves out (no selection rows) is stored as length 0.
			b = binary.AppendUvarint(b, uint64(len(tables[name])))
			b = append(b, tables[name]...)
		}
		if err := put(chunkName(k), b); err != nil {
			return err
		}
	}
	return nil
}

// roundsOf lists the round of every row.
func roundsOf[R any](rows []R, round func(R) int) []int {
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = round(r)
	}
	return out
}

// appendRows decodes a chunk's table and appends its rows.
func appendRows[R any](dst *[]R, b []byte) error {
	rows, _, err := results.Decode[R](b)
	if err != nil {
		return err
	}
	*dst = append(*dst, rows...)
	return nil
}

// readChunks reads a chunked checkpoint's round and per-round rows into st.
func readChunks(blobs map[string][]byte, st *State) error {
	round, err := strconv.Atoi(string(blobs[checkpointRoundBlob]))
	if err != nil {
		return fmt.Errorf("checkpoint round: %w", err)
	}
	st.Round = round
	for k := 0; ; k++ {
		b, ok := blobs[chunkName(k)]
		if !ok {
			return nil
		}
		for _, name := range tableNames {
			n, w := binary.Uvarint(b)
			if w <= 0 || uint64(len(b)-w) < n {
				return fmt.Errorf("checkpoint chunk %d is truncated", k)
			}
			tb := b[w : w+int(n)]
			b = b[w+int(n):]
			if n == 0 {
				continue
			}
			switch name {
			case results.OutTrainMetrics:
				err = appendRows(&st.Metrics, tb)
			case results.OutTrainSelection:
				err = appendRows(&st.Selection, tb)
			case results.OutTrainComm:
				err = appendRows(&st.Comm, tb)
			case results.OutTrainWork:
				err = appendRows(&st.Work, tb)
			}
			if err != nil {
				return fmt.Errorf("checkpoint chunk %d, %s: %w", k, name, err)
			}
		}
	}
}
