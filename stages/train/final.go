package train

import "github.com/fedpipe/fedpipe/manifest"

// FinalFromHistory returns the clients' final test metrics as the train stage's evaluation
// after its last round recorded them in history, before fine-tuning (the "test" rows) and
// after (the SplitTestFT rows; nil when the run does not fine-tune), and true, when that
// evaluation is the one EvaluateFinal would compute: the same models (EvalModel),
// fine-tuned with the same streams (round r.Train.Rounds, "finetune"), scored by the same
// plain evaluator on the same test split. Then the evaluate stage need not fine-tune every
// client a second time. It returns false for methods that infer with more than one model
// (NeedsGlobal: DM-PFL+'s evaluation in training differs from its final one) and when any
// client's row is missing (after fine-tuning: some clients have one and others not).
func FinalFromHistory(r *manifest.Run, history []Metric, clients int) (before, after []Metric, ok bool) {
	if NeedsGlobal(r) || clients <= 0 {
		return nil, nil, false
	}
	collect := func(split string) ([]Metric, int) {
		rows := make([]Metric, clients)
		seen := make([]bool, clients)
		n := 0
		for _, m := range history {
			if m.Round != r.Train.Rounds || m.Split != split || m.Client < 0 || m.Client >= clients || seen[m.Client] {
				continue
			}
			m.Split = "test"
			rows[m.Client], seen[m.Client] = m, true
			n++
		}
		return rows, n
	}
	before, n := collect("test")
	if n != clients {
		return nil, nil, false
	}
	after, n = collect(SplitTestFT)
	switch n {
	case 0:
		return before, nil, true
	case clients:
		return before, after, true
	}
	return nil, nil, false
}
