package stats

import (
	"encoding/json"
	"testing"
)

// What cannot be computed (n = 1: no std, no interval) is null in JSON, not an encoding error.
func TestJSONNull(t *testing.T) {
	b, err := json.Marshal(Summarize([]float64{95.5}))
	if err != nil || string(b) != `{"n":1,"mean":95.5,"std":null,"ci":{"lo":null,"hi":null}}` {
		t.Errorf("summary: %s %v", b, err)
	}
	b, err = json.Marshal(Compare(Seeds, []float64{1}, []float64{2}))
	if err != nil || string(b) != `{"unit":"seeds","n":1,"mean_diff":1,"ci":{"lo":null,"hi":null},"p":1,"test":"exact sign-flip permutation test"}` {
		t.Errorf("paired: %s %v", b, err)
	}
}
