package numpy

import (
	"math"
	"reflect"
	"testing"
)

// The expected values below are numpy 1.24.2's (Debian python3-numpy), printed by
// np.random.RandomState(42) calls named in each case; they are numpy's output, not fedpipe's.

func TestSeedAndRawOutputs(t *testing.T) {
	r := New(42)
	// get_state()[1][:3]: the seeded key before the first twist.
	if got := r.key[:3]; !reflect.DeepEqual(got, []uint32{42, 3107752595, 1895908407}) {
		t.Errorf("seeded key %v", got)
	}
	// random_sample(3)
	for i, want := range []float64{0.3745401188473625, 0.9507143064099162, 0.7319939418114051} {
		if got := r.Float64(); got != want {
			t.Errorf("random_sample #%d = %v, want %v", i, got, want)
		}
	}
}

func TestShuffle(t *testing.T) {
	// a = np.arange(10); shuffle(a)
	a := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	New(42).Shuffle(a)
	if want := []int{8, 1, 5, 0, 7, 2, 9, 4, 3, 6}; !reflect.DeepEqual(a, want) {
		t.Errorf("shuffle = %v, want %v", a, want)
	}
}

func TestGammaAndDirichlet(t *testing.T) {
	close := func(name string, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-14*math.Abs(want[i]) {
				t.Errorf("%s[%d] = %v, want %v", name, i, got[i], want[i])
			}
		}
	}
	// dirichlet([0.1]*5): the shape < 1 branch.
	close("dirichlet(0.1)", New(42).Dirichlet(0.1, 5),
		[]float64{0.0010782875712982156, 0.876649576031001, 1.6963522958440809e-07, 8.675356470767745e-12, 0.12227196675379577})
	// dirichlet([2.5]*4): Marsaglia and Tsang over the polar normals.
	close("dirichlet(2.5)", New(42).Dirichlet(2.5, 4),
		[]float64{0.3455694597696422, 0.22814345015881132, 0.21314228981191474, 0.2131448002596318})
	// standard_gamma(1.0, 2) then standard_normal(3), one stream.
	r := New(42)
	close("standard_gamma(1)", []float64{r.Gamma(1), r.Gamma(1)}, []float64{0.4692680899768591, 3.010121430917521})
	close("standard_normal", []float64{r.Normal(), r.Normal(), r.Normal()}, []float64{0.6476885381006925, 1.5230298564080254, -0.23415337472333597})
}

func TestIntervalStaysInRange(t *testing.T) {
	r := New(7)
	for _, max := range []uint32{0, 1, 5, 1 << 20, 1<<32 - 1} {
		for range 100 {
			if v := r.interval(max); v > max {
				t.Fatalf("interval(%d) = %d", max, v)
			}
		}
	}
}
