package manifest

import "testing"

// A swapped pair of letters is one edit (issue 18): "fedopb" is a typo of fedobp, not of
// feddpa (two substitutions away from both by plain Levenshtein distance).
func TestNearestCountsTranspositions(t *testing.T) {
	for _, c := range []struct{ typo, want string }{
		{"fedopb", "fedobp"},
		{"fedvag", "fedavg"},
		{"lcoal", "local"},
	} {
		if got := nearest(c.typo, []string{"feddpa", "fedavg", "fedobp", "local", "lgfedavg"}); got != c.want {
			t.Errorf("nearest(%q) = %q, want %q", c.typo, got, c.want)
		}
	}
	if d := editDistance("ab", "ba"); d != 1 {
		t.Errorf(`editDistance("ab", "ba") = %d, want 1`, d)
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf(`editDistance("kitten", "sitting") = %d, want 3`, d)
	}
}
