package model

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// TestSetMomentumResumesASession: steps 1–2 in one session, then step 3 in a new session
// from its parameters with SetMomentum of its buffers, give the bits of steps 1–3 in one
// session; a new session without the buffers (momentum from zero) gives others, and the
// buffers read back as they were set.
func TestSetMomentumResumesASession(t *testing.T) {
	spec := ModelSpec{Arch: ArchCNN4, InputShape: []int{20, 20, 1}, NumClasses: 4}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	opt := SGD{LR: 0.05, Momentum: 0.7}
	r := rand.New(rand.NewPCG(4, 4))
	var xs [][]float32
	var ys [][]int32
	for range 3 {
		x, y := randomData(r, 8, 20*20, 4)
		xs, ys = append(xs, x), append(ys, y)
	}
	steps := func(s *Session, from, to int) {
		for i := from; i < to; i++ {
			if _, err := s.Step(xs[i], ys[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	session := func(p tensor.List) *Session {
		s, err := m.NewSession(p, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	params := func(s *Session) tensor.List {
		p, err := s.Params()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	whole := session(spec.Init(2))
	steps(whole, 0, 3)
	first := session(spec.Init(2))
	steps(first, 0, 2)
	mom, err := first.Momentum()
	if err != nil {
		t.Fatal(err)
	}
	moved := false
	for _, b := range mom {
		for _, v := range b.Data {
			moved = moved || v != 0
		}
	}
	if !moved {
		t.Fatal("two steps with momentum 0.7 left the buffers at zero")
	}
	resumed := session(params(first))
	if err := resumed.SetMomentum(mom); err != nil {
		t.Fatal(err)
	}
	if back, err := resumed.Momentum(); err != nil || !reflect.DeepEqual(back, mom) {
		t.Fatalf("the buffers read back differ from those set (%v)", err)
	}
	steps(resumed, 2, 3)
	if !reflect.DeepEqual(params(resumed), params(whole)) {
		t.Error("a session resumed with SetMomentum differs from the uninterrupted one")
	}
	fresh := session(params(first))
	steps(fresh, 2, 3)
	if reflect.DeepEqual(params(fresh), params(whole)) {
		t.Error("momentum from zero gives the same step: the test cannot tell them apart")
	}
	if err := fresh.SetMomentum(mom[:1]); err == nil {
		t.Error("SetMomentum took a list missing tensors")
	}
}
