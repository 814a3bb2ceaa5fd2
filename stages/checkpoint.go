package stages

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/train"
)

// checkpointChunkRounds is how many rounds of per-round rows (metrics, selection,
// communication, work) one checkpoint chunk holds.
//
// A checkpoint stores those rows in chunks of whole rounds, each chunk one blob: a chunk
// whose rounds are all done encodes to the same bytes at every later checkpoint, so the
// store keeps it once, and each checkpoint adds only its models and its last, partial chunk.
// The store then grows linearly with the rounds (re-storing whole tables at every checkpoint
// grew it with their square). The chunk list in the checkpoint's index still grows, by one
// entry (about 90 bytes) per chunkRounds rounds.
const checkpointChunkRounds = 10

// checkpointRoundBlob names the blob holding a chunked checkpoint's round; its presence
// marks the chunked layout.
const checkpointRoundBlob = "round"

// chunkName names the blob of chunk k.
func chunkName(k int) string { return fmt.Sprintf("rows/%06d", k) }

// encodeCheckpoint is encodeState for a resume point: the same blobs, except the per-round
// tables, which are cut into chunks of checkpointChunkRounds rounds (see there). The rows of
// every table must come in non-decreasing round order, as train.Run appends them; otherwise
// the tables are stored whole, as encodeState does.
func encodeCheckpoint(st *train.State) (pipeline.Outputs, error) {
	chunk := func(round int) int { return max(round-1, 0) / checkpointChunkRounds }
	last := chunk(st.Round)
	sorted := true
	check := func(rounds func(yield func(int) bool)) {
		prev := -1
		for r := range rounds {
			if chunk(r) < prev || chunk(r) > last {
				sorted = false
			}
			prev = chunk(r)
		}
	}
	check(func(yield func(int) bool) {
		for _, m := range st.Metrics {
			yield(m.Round)
		}
	})
	check(func(yield func(int) bool) {
		for _, s := range st.Selection {
			yield(s.Round)
		}
	})
	check(func(yield func(int) bool) {
		for _, c := range st.Comm {
			yield(c.Round)
		}
	})
	check(func(yield func(int) bool) {
		for _, w := range st.Work {
			yield(w.Round)
		}
	})
	if !sorted {
		return encodeState(st)
	}
	out := encodeModels(st)
	out[checkpointRoundBlob] = []byte(strconv.Itoa(st.Round))
	var mi, si, ci, wi int
	for k := 0; k <= last; k++ {
		// The chunk's rows: every row whose round falls in chunk k (and, in chunk 0, round 0).
		part := &train.State{Round: (k + 1) * checkpointChunkRounds}
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
		tables := pipeline.Outputs{}
		if err := encodeTables(tables, part); err != nil {
			return nil, err
		}
		var b []byte
		for _, name := range tableNames {
			b = binary.AppendUvarint(b, uint64(len(tables[name])))
			b = append(b, tables[name]...)
		}
		out[chunkName(k)] = b
	}
	return out, nil
}

// tableNames are the per-round tables of a state, in the order a chunk holds them.
var tableNames = []string{"metrics", "selection", "comm", "work"}

// joinChunks turns the chunks of a chunked checkpoint back into encodeState's whole tables
// (blobs "metrics", "selection", "comm", "work"), in place, and returns the round.
func joinChunks(blobs map[string][]byte) (round int, err error) {
	if round, err = strconv.Atoi(string(blobs[checkpointRoundBlob])); err != nil {
		return 0, fmt.Errorf("checkpoint round: %w", err)
	}
	var st train.State
	for k := 0; ; k++ {
		b, ok := blobs[chunkName(k)]
		if !ok {
			break
		}
		for _, name := range tableNames {
			n, w := binary.Uvarint(b)
			if w <= 0 || uint64(len(b)-w) < n {
				return 0, fmt.Errorf("checkpoint chunk %d is truncated", k)
			}
			t, err := table.Decode(b[w : w+int(n)])
			if err != nil {
				return 0, fmt.Errorf("checkpoint chunk %d, %s: %w", k, name, err)
			}
			b = b[w+int(n):]
			switch name {
			case "metrics":
				rows, err := train.MetricsFromTable(t)
				if err != nil {
					return 0, err
				}
				st.Metrics = append(st.Metrics, rows...)
			case "selection":
				rows, err := train.SelectionFromTable(t)
				if err != nil {
					return 0, err
				}
				st.Selection = append(st.Selection, rows...)
			case "comm":
				rows, err := train.CommFromTable(t)
				if err != nil {
					return 0, err
				}
				st.Comm = append(st.Comm, rows...)
			case "work":
				rows, err := train.WorkFromTable(t)
				if err != nil {
					return 0, err
				}
				st.Work = append(st.Work, rows...)
			}
		}
	}
	st.Round = round
	tables := pipeline.Outputs{}
	if err := encodeTables(tables, &st); err != nil {
		return 0, err
	}
	for name, b := range tables {
		blobs[name] = b
	}
	return round, nil
}
