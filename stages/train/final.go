package train

import "github.com/fedpipe/fedpipe/manifest"

// FinalFromHistory returns the clients' final test metrics as the train stage's evaluation
// after its last round recorded them in history, and true, when that evaluation is the one
// EvaluateFinal would compute: the same models (EvalModel), fine-tuned with the same
// streams (round r.Train.Rounds, "finetune"), scored by the same plain evaluator on the same
// test split. Then the evaluate stage need not fine-tune every client a second time. It
// returns false for methods that infer with more than one model (NeedsGlobal: DM-PFL+'s
// evaluation in training differs from its final one) and when any client's row is missing.
func FinalFromHistory(r *manifest.Run, history []Metric, clients int) ([]Metric, bool) {
	if NeedsGlobal(r) || clients <= 0 {
		return nil, false
	}
	rows := make([]Metric, clients)
	seen := make([]bool, clients)
	n := 0
	for _, m := range history {
		if m.Round != r.Train.Rounds || m.Split != "test" || m.Client < 0 || m.Client >= clients || seen[m.Client] {
			continue
		}
		rows[m.Client], seen[m.Client] = m, true
		n++
	}
	if n != clients {
		return nil, false
	}
	return rows, true
}
