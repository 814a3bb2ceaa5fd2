package bench

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/model"
)

// Journal's passes on a small round: four passes, two with a journal that
// records every timed round, and the difference between the means printed.
func TestJournalPassesSmall(t *testing.T) {
	cfg := RoundConfig{Clients: 4, TrainSamples: 160, Participants: 2, Epochs: 1, Batch: 16, EvalBatch: 64,
		Rounds: 3, Opt: model.SGD{LR: 0.01}, Seed: 1}
	var out, errb bytes.Buffer
	if err := journalPasses(model.CPUBackend, "small", cfg, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	s := out.String()
	if strings.Count(s, "without journal):") != 2 || strings.Count(s, "with journal):") != 2 {
		t.Fatalf("passes:\n%s", s)
	}
	if !regexp.MustCompile(`without journal [0-9.]+ s/round, with [0-9.]+ s/round: [+-][0-9.]+ %`).MatchString(s) {
		t.Fatalf("no comparison line:\n%s", s)
	}
}
