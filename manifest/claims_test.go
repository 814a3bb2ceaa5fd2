package manifest

import (
	"errors"
	"strings"
	"testing"
)

// lineOf is the 1-based line of src holding s.
func lineOf(src, s string) int {
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	return 0
}

// A claims section decodes, and each comparison it rests on is listed; a claim naming a
// method the manifest does not have fails at the line and field naming it, as invalid input.
func TestClaimsDecodeAndFailAtTheirLine(t *testing.T) {
	good := validManifest + `claims:
  - {kind: best, method: fedavg, metric: final_pooled, source: "T1, bold"}
  - kind: above
    method: local
    than: [fedavg]
    margin: 0.5
    metric: best_pooled
    source: "T1, text"
  - {kind: order, order: [local, fedavg], metric: final_pooled, source: "T1, text"}
`
	m, err := ParseManifest("m.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Claims) != 3 || m.Claims[1].Margin != 0.5 || m.Claims[1].Threshold() != 0.5 {
		t.Fatalf("claims %+v", m.Claims)
	}
	if p := m.Claims[0].Pairs([]string{"fedavg", "local"}); len(p) != 1 || p[0] != [2]string{"fedavg", "local"} {
		t.Errorf("best claim's pairs %v", p)
	}
	if p := m.Claims[2].Pairs(nil); len(p) != 1 || p[0] != [2]string{"local", "fedavg"} {
		t.Errorf("order claim's pairs %v", p)
	}

	cases := []struct{ body, bad, field string }{
		{"  - {kind: best, method: fedbogus, metric: final_pooled, source: s}\n", "fedbogus", "claims[0].method"},
		{"  - kind: above\n    method: local\n    than: [fedavg, nosuch]\n    metric: final_pooled\n    source: s\n", "nosuch", "claims[0].than[1]"},
		{"  - kind: order\n    order: [local, fedavgg]\n    metric: final_pooled\n    source: s\n", "fedavgg", "claims[0].order[1]"},
		{"  - {kind: best, method: local, metric: accuracy, source: s}\n", "accuracy", "claims[0].metric"},
	}
	for _, c := range cases {
		src := validManifest + "claims:\n" + c.body
		_, err := ParseManifest("m.yaml", []byte(src))
		var ie *InputError
		if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: err %v, want an input error", c.bad, err)
			continue
		}
		if want := lineOf(src, c.bad); ie.Line != want || ie.Field != c.field || !strings.Contains(err.Error(), c.bad) {
			t.Errorf("%q: error at line %d field %q (%v), want line %d field %q", c.bad, ie.Line, ie.Field, err, want, c.field)
		}
	}
	// "did you mean" where a label is near one the manifest has.
	_, err = ParseManifest("m.yaml", []byte(validManifest+"claims:\n"+cases[2].body))
	if err == nil || !strings.Contains(err.Error(), `did you mean "fedavg"`) {
		t.Errorf("near miss: %v", err)
	}
}
