package verify

import "fmt"

// Tally counts `fedpipe verify`'s cells: passed, failed and not computed, and how many
// carry a known deviation.
type Tally struct {
	Passed, Failed, Missing int
	// Known counts the cells with a known deviation (Cell.Known).
	Known int
}

// TallyOf counts cells by verdict.
func TallyOf(cells []Cell) Tally {
	var t Tally
	for _, c := range cells {
		switch c.Verdict {
		case Pass:
			t.Passed++
		case Fail:
			t.Failed++
		case Missing:
			t.Missing++
		}
		if c.Known != "" {
			t.Known++
		}
	}
	return t
}

// String is the line verify prints under its table: "2 passed, 1 (1 with a known deviation)
// failed, 0 not computed".
func (t Tally) String() string {
	failed := fmt.Sprint(t.Failed)
	if t.Known > 0 {
		failed += fmt.Sprintf(" (%d with a known deviation)", t.Known)
	}
	return fmt.Sprintf("%d passed, %s failed, %d not computed", t.Passed, failed, t.Missing)
}

// Unexplained counts the cells that make verify fail: those that failed without a known
// deviation, and those not computed.
func (t Tally) Unexplained() int { return t.Failed - t.Known + t.Missing }
