package verify

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// oneSeed is a method's figures on seed 0: value, and per-client accuracies base[i] + shift
// + noise·(a fixed draw in [-1, 1]).
func oneSeed(value float64, base []float64, shift, noise float64, seed uint64) map[int64]runFigures {
	r := rand.New(rand.NewPCG(seed, 1))
	c := make([]float64, len(base))
	for i := range base {
		c[i] = base[i] + shift + noise*(2*r.Float64()-1)
	}
	return map[int64]runFigures{0: {value: value, clients: c}}
}

func baseClients(n int) []float64 {
	r := rand.New(rand.NewPCG(7, 7))
	b := make([]float64, n)
	for i := range b {
		b[i] = 80 + 15*r.Float64()
	}
	return b
}

var bestClaim = manifest.Claim{Kind: manifest.ClaimBest, Method: "ours", Metric: "best_pooled", Source: "T6, bold"}

// A best-of-column claim on one seed: it holds where ours is above every rival on the
// clients of the run; the mutant that swaps ours and a rival's kept figures reverses it,
// naming that rival and the test over one run's clients; noise alone leaves it undecided;
// a rival with no result leaves it short of holding; ours with none, not computable.
func TestClaimVerdicts(t *testing.T) {
	base := baseClients(100)
	labels := []string{"ours", "rival", "weak"}
	runs := map[string]map[int64]runFigures{
		"ours":  oneSeed(96.9, base, 1.0, 0.5, 1),
		"rival": oneSeed(96.2, base, 0, 0.5, 2),
		"weak":  oneSeed(90.0, base, -5, 0.5, 3),
	}
	v := judge(bestClaim, labels, "", runs, 4)
	if v.Verdict != Holds || len(v.Pairs) != 2 || v.Pairs[v.Deciding].Lower != "rival" {
		t.Fatalf("holds: got %s, %+v", v.Verdict, v.Pairs)
	}
	if !strings.Contains(v.Line(), OneRun) || !strings.Contains(v.Line(), "Wilcoxon signed-rank") {
		t.Errorf("a one-seed verdict must say its test and what it shows: %s", v.Line())
	}

	mutant := map[string]map[int64]runFigures{"ours": runs["rival"], "rival": runs["ours"], "weak": runs["weak"]}
	v = judge(bestClaim, labels, "", mutant, 4)
	if v.Verdict != Reversed || v.Pairs[v.Deciding].Lower != "rival" || v.Pairs[v.Deciding].Test.Mean >= 0 ||
		!strings.Contains(v.Line(), "Reversed by rival") {
		t.Errorf("mutant: got %s: %s", v.Verdict, v.Line())
	}

	noisy := map[string]map[int64]runFigures{
		"ours":  oneSeed(96.3, base, 0, 3, 4),
		"rival": oneSeed(96.2, base, 0, 3, 5),
		"weak":  runs["weak"],
	}
	v = judge(bestClaim, labels, "", noisy, 4)
	if v.Verdict != Undecided || v.Pairs[v.Deciding].Lower != "rival" || len(v.Pairs[v.Deciding].Seeds) != 1 {
		t.Errorf("noise on one seed: got %s: %s", v.Verdict, v.Line())
	}
	if tl := TallyClaims([]ClaimVerdict{v}).Line(); tl != "claims: 0 of 1 hold, 0 reversed, 1 undecided, 0 not yet computable; the 1 verdicts rest on 1 of 4 seeds each" {
		t.Errorf("tally line %q", tl)
	}

	partial := map[string]map[int64]runFigures{"ours": runs["ours"], "rival": {}, "weak": runs["weak"]}
	v = judge(bestClaim, labels, "", partial, 4)
	if v.Verdict != Undecided || len(v.Missing) != 1 || v.Missing[0] != "rival" {
		t.Errorf("a rival not computed: got %s, missing %v", v.Verdict, v.Missing)
	}

	none := map[string]map[int64]runFigures{"ours": {}, "rival": runs["rival"], "weak": runs["weak"]}
	v = judge(bestClaim, labels, "", none, 4)
	if v.Verdict != NotComputable || !strings.Contains(v.Line(), "ours has no result") {
		t.Errorf("ours not computed: got %s: %s", v.Verdict, v.Line())
	}
	if tl := TallyClaims([]ClaimVerdict{v}).Line(); tl != "claims: 0 of 1 hold, 0 reversed, 0 undecided, 1 not yet computable" {
		t.Errorf("tally line %q", tl)
	}
}

// A margin claim is tested beyond its margin: ours 1 point above rival holds "above by
// more than 0.5" and is reversed on "above by more than 2"; a within claim holds when ours
// is 0.3 below but allowed 1.
func TestClaimMargins(t *testing.T) {
	base := baseClients(100)
	runs := map[string]map[int64]runFigures{
		"ours":  oneSeed(97, base, 1.0, 0.3, 1),
		"rival": oneSeed(96, base, 0, 0.3, 2),
	}
	above := manifest.Claim{Kind: manifest.ClaimAbove, Method: "ours", Than: []string{"rival"}, Margin: 0.5, Metric: "best_pooled", Source: "text"}
	if v := judge(above, nil, "", runs, 4); v.Verdict != Holds {
		t.Errorf("above by 0.5: %s", v.Line())
	}
	above.Margin = 2
	if v := judge(above, nil, "", runs, 4); v.Verdict != Reversed || !strings.Contains(v.Line(), "needs more than +2.00") {
		t.Errorf("above by 2: %s", v.Line())
	}
	below := map[string]map[int64]runFigures{"ours": oneSeed(95.7, base, -0.3, 0.3, 1), "rival": runs["rival"]}
	within := manifest.Claim{Kind: manifest.ClaimWithin, Method: "ours", Than: []string{"rival"}, Margin: 1, Metric: "best_pooled", Source: "text"}
	if v := judge(within, nil, "", below, 4); v.Verdict != Holds {
		t.Errorf("within 1: %s", v.Line())
	}
}

// Over two or more seeds the comparison pairs the seeds with the exact sign-flip test;
// four seeds can never reach the 5 % level (p ≥ 2/16), so the verdict stays undecided.
func TestClaimOverSeeds(t *testing.T) {
	ours, rival := map[int64]runFigures{}, map[int64]runFigures{}
	for s := int64(0); s < 4; s++ {
		ours[s] = runFigures{value: 97 + 0.1*float64(s)}
		rival[s] = runFigures{value: 96}
	}
	above := manifest.Claim{Kind: manifest.ClaimAbove, Method: "ours", Than: []string{"rival"}, Metric: "best_pooled", Source: "text"}
	v := judge(above, nil, "", map[string]map[int64]runFigures{"ours": ours, "rival": rival}, 4)
	p := v.Pairs[0]
	if v.Verdict != Undecided || p.Test == nil || p.Test.P != 0.125 || !strings.Contains(p.Test.Test, "sign-flip") || !strings.Contains(p.Over, "4 seeds") {
		t.Errorf("four seeds: %s %+v", v.Line(), p.Test)
	}
	for s := int64(4); s < 7; s++ {
		ours[s], rival[s] = runFigures{value: 97}, runFigures{value: 96}
	}
	if v := judge(above, nil, "", map[string]map[int64]runFigures{"ours": ours, "rival": rival}, 7); v.Verdict != Holds {
		t.Errorf("seven seeds all above: %s", v.Line())
	}
}
