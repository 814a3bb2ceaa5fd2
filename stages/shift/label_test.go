package shift

import (
	"reflect"
	"testing"
)

func TestLabelShiftDeterministicAndChangesProportions(t *testing.T) {
	// 40 samples in 4 classes (10 each); the client holds 20, only of classes 0 and 1.
	labels := make([]int32, 40)
	for i := range labels {
		labels[i] = int32(i / 10)
	}
	var own, pool []int
	for i := 0; i < 20; i++ {
		own = append(own, i)
	}
	for i := 0; i < 40; i++ {
		pool = append(pool, i)
	}
	hist := func(idx []int) []int {
		h := make([]int, 4)
		for _, i := range idx {
			h[labels[i]]++
		}
		return h
	}
	changed := false
	for seed := int64(0); seed < 5; seed++ {
		a := LabelShift(own, pool, labels, 4, 0.3, seed, 2)
		if !reflect.DeepEqual(a, LabelShift(own, pool, labels, 4, 0.3, seed, 2)) {
			t.Fatal("label shift is not deterministic")
		}
		if len(a) != len(own) {
			t.Fatalf("%d samples, want %d", len(a), len(own))
		}
		h := hist(a)
		if !reflect.DeepEqual(h, []int{10, 10, 0, 0}) {
			changed = true
		}
		// Classes the client lacks come from the pool; classes it has come from its own data.
		for _, i := range a {
			if labels[i] < 2 && i >= 20 {
				t.Fatalf("sample %d of class %d drawn from the pool although the client has that class", i, labels[i])
			}
		}
	}
	if !changed {
		t.Error("five draws at alpha 0.3 all kept the client's class proportions")
	}
	// Large alpha: close to balanced over the 4 classes, so classes 2 and 3 appear.
	h := hist(LabelShift(own, pool, labels, 4, 1000, 1, 0))
	for k, v := range h {
		if v < 3 || v > 7 {
			t.Errorf("alpha 1000: class %d has %d of 20 samples, want about 5 (%v)", k, v, h)
		}
	}
}
