package model

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// TestFrozenLayersStepIsTheMaskedStep: masks that freeze a seqNet's first layers whole
// (FedRep's head epochs) take the masked step without those layers' backward pass, and
// give the masked step's parameters, momentum and losses bit for bit, over steps with
// momentum and weight decay, a ragged batch included; a mask that freezes no leading layer
// whole keeps the masked step.
func TestFrozenLayersStepIsTheMaskedStep(t *testing.T) {
	cases := []struct {
		name string
		spec ModelSpec
	}{
		{"cnn4", ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}},
		{"mlp", ModelSpec{Arch: "mlp", InputShape: []int{6}, NumClasses: 3, Hidden: []int{5, 4}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			init := c.spec.Init(3)
			layers := len(init) / 2
			sample := 1
			for _, d := range c.spec.InputShape {
				sample *= d
			}
			x := make([]float32, 5*sample)
			for i := range x {
				x[i] = float32(math.Sin(0.37 * float64(i)))
			}
			y := make([]int32, 5)
			for i := range y {
				y[i] = int32(i*7) % int32(c.spec.NumClasses)
			}
			opt := SGD{LR: 0.05, Momentum: 0.9, WeightDecay: 0.001}
			// freeze returns a mask with the first k layers at 0 and, when partial, half of
			// layer k's weight at 0 too (a layer that trains in part is not frozen).
			freeze := func(k int, partial bool) tensor.List {
				var mask tensor.List
				for i, p := range init {
					mt := tensor.New(p.Name, p.Shape...)
					for j := range mt.Data {
						switch {
						case i/2 < k:
						case partial && i == 2*k:
							mt.Data[j] = float32(j % 2)
						default:
							mt.Data[j] = 1
						}
					}
					mask = append(mask, mt)
				}
				return mask
			}
			run := func(m *Model, mask tensor.List) (tensor.List, tensor.List, []float32, bool) {
				s, err := m.NewSession(init, opt)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if err := s.SetMask(mask); err != nil {
					t.Fatal(err)
				}
				var losses []float32
				for _, rows := range []int{4, 4, 1, 4} { // a ragged batch among full ones
					loss, err := s.Step(x[:rows*sample], y[:rows])
					if err != nil {
						t.Fatal(err)
					}
					losses = append(losses, loss)
				}
				p, err := s.Params()
				if err != nil {
					t.Fatal(err)
				}
				mom, err := s.Momentum()
				if err != nil {
					t.Fatal(err)
				}
				return p, mom, losses, s.frozen != nil
			}
			fast, err := NewModel("", c.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer fast.Close()
			slow, err := NewModel("", c.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer slow.Close()
			slow.noFrozenSteps = true
			for k := 1; k < layers; k++ {
				for _, partial := range []bool{false, true} {
					mask := freeze(k, partial)
					fp, fm, fl, used := run(fast, mask)
					sp, sm, sl, _ := run(slow, mask)
					label := fmt.Sprintf("%d frozen layers, partial %v", k, partial)
					if !used {
						t.Errorf("%s: the masked step ran, not the frozen-layers step", label)
					}
					if !reflect.DeepEqual(fp, sp) || !reflect.DeepEqual(fm, sm) || !reflect.DeepEqual(fl, sl) {
						t.Errorf("%s: the frozen-layers step differs from the masked step (losses %v, want %v)", label, fl, sl)
					}
					for i := range 2 * k {
						if !reflect.DeepEqual(fp[i].Data, init[i].Data) {
							t.Errorf("%s: frozen %s moved", label, fp[i].Name)
						}
					}
					moved := false
					for i := 2 * k; i < len(fp); i++ {
						moved = moved || !reflect.DeepEqual(fp[i].Data, init[i].Data)
					}
					if !moved {
						t.Errorf("%s: no trainable layer moved", label)
					}
				}
				if want := fmt.Sprintf("train-masked-frozen%d", k); fast.compiles[want] != 1 || slow.compiles[want] != 0 {
					t.Errorf("%s compiled %d times (and %d with frozen steps off), want once (and never)", want, fast.compiles[want], slow.compiles[want])
				}
			}
			if _, _, _, used := run(fast, freeze(0, true)); used {
				t.Error("a mask that freezes no leading layer whole took the frozen-layers step")
			}
		})
	}
}
