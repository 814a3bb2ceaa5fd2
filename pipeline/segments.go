package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Segment is one process's share of a train stage that ran in several (interrupted and
// resumed from a checkpoint, continued from a shorter cached run, or resumed from a
// checkpoint another machine pushed): the rounds it trained and where. A segment whose CPU
// is empty covers rounds whose provenance was not recorded (a checkpoint written before
// segments were).
type Segment struct {
	From int `json:"from"`
	To   int `json:"to"`
	// Provenance is where the segment ran (its Date: when its last round ended; its own
	// Segments empty), in the same JSON fields as a result's.
	Provenance
}

// metaSegments is the action meta key of Provenance.Segments (JSON).
const metaSegments = "segments"

// segment is the segment of this process: rounds from..to, run for wall.
func (b BuildInfo) segment(from, to int, wall time.Duration) Segment {
	return Segment{From: from, To: to, Provenance: b.provenance(wall)}
}

// segmentsUpTo completes the history prior (the segments before a resume after round
// resumed) so that it covers rounds 1..resumed: rounds it does not cover get one segment
// without provenance.
func segmentsUpTo(prior []Segment, resumed int) []Segment {
	out := make([]Segment, 0, len(prior)+1)
	next := 1
	for _, s := range prior {
		if s.From != next || s.To < s.From || s.To > resumed {
			break // not a history of these rounds: keep what is consistent
		}
		out = append(out, s)
		next = s.To + 1
	}
	if next <= resumed {
		out = append(out, Segment{From: next, To: resumed})
	}
	return out
}

// segmentsOf is the history a finished result's provenance gives for its rounds 1..rounds:
// its own segments, or one segment from its provenance.
func segmentsOf(p Provenance, rounds int) []Segment {
	if len(p.Segments) > 0 {
		return segmentsUpTo(p.Segments, rounds)
	}
	if p.CPU == "" {
		return segmentsUpTo(nil, rounds)
	}
	return []Segment{{From: 1, To: rounds, Provenance: p}}
}

func encodeSegments(s []Segment) string {
	b, _ := json.Marshal(s) // a slice of plain structs: cannot fail
	return string(b)
}

func decodeSegments(s string) []Segment {
	var out []Segment
	if s == "" || json.Unmarshal([]byte(s), &out) != nil {
		return nil
	}
	return out
}

// Text condenses a segment for a provenance line: "rounds 1–290: CPU, N threads, 12m0s,
// commit …".
func (s Segment) Text() string {
	head := fmt.Sprintf("rounds %d–%d: ", s.From, s.To)
	if s.CPU == "" {
		return head + "not recorded"
	}
	parts := []string{s.CPU}
	if t := s.ThreadsText(); t != "" {
		parts[0] += ", " + t + " threads"
	}
	if s.Seconds > 0 {
		parts = append(parts, time.Duration(s.Seconds*float64(time.Second)).Round(time.Minute).String())
	}
	if s.Commit != "" {
		parts = append(parts, "commit "+s.ShortCommit())
	}
	return head + strings.Join(parts, ", ")
}
