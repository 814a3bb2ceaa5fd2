package site

import (
	"github.com/fedpipe/fedpipe/verify"
)

// claimsIntro explains the report's claims section.
const claimsIntro = "What the paper concludes from this table (the manifest's `claims:`), each with a verdict from the results at hand: " +
	"holds, reversed, undecided or not computable yet; the effect, its 95 % interval and the test it rests on (paired over seeds with two or " +
	"more, else over the clients of the one run: variation within one training run). A reversed claim is a finding about the paper, not a " +
	"failure of fedpipe (docs/statistics.md, Claims)."

// claimsGrid lays the claims' verdicts out: verdict, claim, cell, source and the comparison
// the verdict names.
func claimsGrid(vs []verify.ClaimVerdict) grid {
	g := grid{head: []string{"verdict", "claim", "cell", "source", "comparison (effect, interval, test)"}, text: 5}
	for _, v := range vs {
		cmp := "—"
		if v.Deciding >= 0 {
			cmp = v.Pairs[v.Deciding].Text()
		}
		class := "missing"
		switch v.Verdict {
		case verify.Holds:
			class = "pass"
		case verify.Reversed:
			class = "fail"
		}
		g.rows = append(g.rows, []cell{{text: v.Verdict, class: class}, {text: v.Says}, {text: v.Config}, {text: v.Claim.Source}, {text: cmp}})
	}
	return g
}
