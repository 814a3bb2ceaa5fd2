package verify

import (
	"fmt"
	"sort"
	"strings"
)

// Line is the verdict in one line: the verdict, the claim and its source, then the
// comparison it names with its effect, interval and test.
func (v ClaimVerdict) Line() string {
	var b strings.Builder
	b.WriteString(v.Verdict + ": " + v.Says)
	if v.Config != "" {
		b.WriteString(" [" + v.Config + "]")
	}
	b.WriteString(" — " + v.Claim.Source)
	if v.Why != "" {
		b.WriteString(". " + v.Why)
	}
	if v.Deciding >= 0 {
		p := v.Pairs[v.Deciding]
		switch v.Verdict {
		case Reversed:
			fmt.Fprintf(&b, ". Reversed by %s: ", p.Lower)
		case Undecided:
			if p.Verdict == Holds {
				b.WriteString(". Holds against every method computed")
			}
			fmt.Fprintf(&b, ". Closest, %s: ", p.Lower)
		case Holds:
			fmt.Fprintf(&b, ". Closest, %s: ", p.Lower)
		case NotComputable:
			b.WriteString(". ")
		}
		b.WriteString(p.Text())
	}
	computed := 0
	for _, p := range v.Pairs {
		if p.Verdict != NotComputable {
			computed++
		}
	}
	if len(v.Pairs) > 1 {
		fmt.Fprintf(&b, " (%d of %d comparisons computed", computed, len(v.Pairs))
		if len(v.Missing) > 0 {
			b.WriteString("; no result yet: " + strings.Join(v.Missing, ", "))
		}
		b.WriteString(")")
	}
	return b.String()
}

// Text is the comparison in words: the effect, its interval and the test, or why there is
// none.
func (p PairTest) Text() string {
	if len(p.Seeds) == 0 {
		return p.Note
	}
	seeds := fmt.Sprintf("seed %s", seedList(p.Seeds))
	if len(p.Seeds) > 1 {
		seeds = fmt.Sprintf("mean of seeds %s", seedList(p.Seeds))
	}
	s := fmt.Sprintf("%s − %s = %+.2f (%.2f vs %.2f, %s", p.Higher, p.Lower, p.Diff, p.HigherValue, p.LowerValue, seeds)
	if p.Threshold != 0 {
		s += fmt.Sprintf("; the claim needs more than %+.2f", p.Threshold)
	}
	s += ")"
	if p.Test == nil {
		return s + "; " + p.Note
	}
	t := p.Test
	s += "; "
	if len(p.Seeds) == 1 {
		s += "per client "
	}
	s += fmt.Sprintf("%+.2f", t.Mean)
	if t.CI.Valid() {
		s += fmt.Sprintf(" [%.2f, %.2f]", t.CI.Lo, t.CI.Hi)
	}
	return s + fmt.Sprintf(", %s, p = %.3g, over %s", t.Test, t.P, p.Over)
}

// ClaimTally counts claim verdicts.
type ClaimTally struct {
	Total, Holds, Reversed, Undecided, NotComputable int
	// Seeds counts the decided verdicts (holds, reversed, undecided) by the number of
	// seeds the comparison they name rests on; SeedsOf is the most seeds a manifest runs.
	Seeds   map[int]int
	SeedsOf int
}

// TallyClaims counts vs.
func TallyClaims(vs []ClaimVerdict) ClaimTally {
	t := ClaimTally{Seeds: map[int]int{}}
	for _, v := range vs {
		t.Total++
		switch v.Verdict {
		case Holds:
			t.Holds++
		case Reversed:
			t.Reversed++
		case Undecided:
			t.Undecided++
		default:
			t.NotComputable++
		}
		t.SeedsOf = max(t.SeedsOf, v.SeedsOf)
		if v.Verdict != NotComputable && v.Deciding >= 0 {
			t.Seeds[len(v.Pairs[v.Deciding].Seeds)]++
		}
	}
	return t
}

// Add adds u's counts to t.
func (t *ClaimTally) Add(u ClaimTally) {
	t.Total += u.Total
	t.Holds += u.Holds
	t.Reversed += u.Reversed
	t.Undecided += u.Undecided
	t.NotComputable += u.NotComputable
	t.SeedsOf = max(t.SeedsOf, u.SeedsOf)
	if t.Seeds == nil {
		t.Seeds = map[int]int{}
	}
	for k, n := range u.Seeds {
		t.Seeds[k] += n
	}
}

// Line is the claims' summary line: "claims: 3 of 10 hold, 1 reversed, 2 undecided, 4 not
// yet computable; the 6 verdicts rest on 1 of 4 seeds each".
func (t ClaimTally) Line() string {
	s := fmt.Sprintf("claims: %d of %d hold, %d reversed, %d undecided, %d not yet computable", t.Holds, t.Total, t.Reversed, t.Undecided, t.NotComputable)
	decided := t.Holds + t.Reversed + t.Undecided
	if decided == 0 {
		return s
	}
	var ks []int
	for k := range t.Seeds {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	if len(ks) == 1 {
		return s + fmt.Sprintf("; the %d verdicts rest on %d of %d seeds each", decided, ks[0], t.SeedsOf)
	}
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%d on %d", t.Seeds[k], k))
	}
	return s + fmt.Sprintf("; the %d verdicts rest on %s of %d seeds", decided, strings.Join(parts, ", "), t.SeedsOf)
}
