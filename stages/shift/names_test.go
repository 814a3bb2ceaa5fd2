package shift

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// The manifest validates corruption names against pipeline's list: keep it equal to ours.
func TestPipelineKnowsEveryCorruption(t *testing.T) {
	if !reflect.DeepEqual(manifest.CorruptionNames, Names()) {
		t.Errorf("manifest.CorruptionNames %v, shift.Names() %v", manifest.CorruptionNames, Names())
	}
}

func TestMixDegree(t *testing.T) {
	own := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	pool := []int{100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111}
	if got := MixDegree(own, pool, 0, 1, 0); !reflect.DeepEqual(got, own) {
		t.Errorf("degree 0 changed the test set: %v", got)
	}
	for _, d := range []float64{0.2, 0.5, 1} {
		got := MixDegree(own, pool, d, 1, 0)
		replaced := 0
		for _, v := range got {
			if v >= 100 {
				replaced++
			}
		}
		if want := int(d * 10); replaced != want || len(got) != 10 {
			t.Errorf("degree %v: %d of %d replaced, want %d", d, replaced, len(got), want)
		}
		if !reflect.DeepEqual(got, MixDegree(own, pool, d, 1, 0)) {
			t.Errorf("degree %v is not deterministic", d)
		}
	}
}
