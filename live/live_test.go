package live

import (
	"strings"
	"testing"
)

// A journal of many rounds stays within MaxPoints and keeps every evaluation, the first
// round and the last.
func TestJournalBounded(t *testing.T) {
	var j Journal
	const rounds = 10000
	for r := 1; r <= rounds; r++ {
		p := Point{Round: r}
		if r%500 == 0 {
			p.Eval = &Eval{TestAccuracy: float64(r)}
		}
		j.add(p)
	}
	if len(j.Points) > MaxPoints {
		t.Fatalf("%d points, more than %d", len(j.Points), MaxPoints)
	}
	if len(j.Points) < MaxPoints/4 {
		t.Fatalf("thinned to %d points: too coarse", len(j.Points))
	}
	if j.Points[0].Round != 1 || j.Last().Round != rounds {
		t.Fatalf("first and last rounds %d, %d", j.Points[0].Round, j.Last().Round)
	}
	evals := 0
	for i, p := range j.Points {
		if i > 0 && p.Round <= j.Points[i-1].Round {
			t.Fatalf("rounds out of order at %d", i)
		}
		if p.Eval != nil {
			evals++
		}
	}
	if evals != rounds/500 {
		t.Fatalf("%d evaluations kept, want %d", evals, rounds/500)
	}
	if e, r := j.LastEval(); e == nil || r != rounds {
		t.Fatalf("last evaluation at round %d", r)
	}
}

// Only evaluations left: the newest MaxPoints stay.
func TestJournalBoundedAllEvals(t *testing.T) {
	var j Journal
	for r := 1; r <= 3*MaxPoints; r++ {
		j.add(Point{Round: r, Eval: &Eval{}})
	}
	if len(j.Points) != MaxPoints || j.Last().Round != 3*MaxPoints {
		t.Fatalf("%d points ending at round %d", len(j.Points), j.Last().Round)
	}
}

func TestETA(t *testing.T) {
	j := Journal{Rounds: 10, State: Running, Points: []Point{{Round: 2, Seconds: 4}, {Round: 4, Seconds: 8}}}
	if got := j.ETA().Seconds(); got != 12 {
		t.Fatalf("ETA %v s, want 12 (6 rounds at 2 s)", got)
	}
	j.State = Finished
	if j.ETA() != 0 {
		t.Fatal("a finished journal has an ETA")
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, in := range []string{"", "{", `{"name":"x"}`} {
		if _, err := Decode([]byte(in)); err == nil || !strings.Contains(err.Error(), "progress journal") {
			t.Errorf("Decode(%q): %v", in, err)
		}
	}
}
