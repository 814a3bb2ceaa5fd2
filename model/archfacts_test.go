package model

import (
	"math"
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model/arch"
)

// The facts package arch states for the manifest (which never builds a model) hold for the
// networks built here: every architecture builds, has BatchNorm and exposes its
// penultimate features (arch.Features, which manifest checks feature-based methods
// against) as arch says, a CNN takes images of its minimum side and refuses one pixel
// less, fc1 sees the pooled side arch.PooledSide says, and the parameter-count estimate is
// within 1% of the real count.
func TestArchFactsMatchTheNetworks(t *testing.T) {
	specs := map[string]ModelSpec{
		arch.CNN4:             {InputShape: []int{28, 28, 1}},
		arch.FedAvgCNN:        {InputShape: []int{32, 32, 3}},
		arch.ResNet18:         {InputShape: []int{32, 32, 3}},
		arch.ResNet18ImageNet: {InputShape: []int{84, 84, 3}},
		arch.MLP:              {InputShape: []int{60}, Hidden: []int{16, 8}},
		arch.LogReg:           {InputShape: []int{561}},
	}
	for _, a := range arch.All {
		s, ok := specs[a]
		if !ok {
			t.Errorf("arch.All lists %s, which this test does not know", a)
			continue
		}
		s.Arch, s.NumClasses = a, 10
		names, shapes, err := s.ParamShapes()
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		exact := 0
		for i, sh := range shapes {
			if !IsRunningStat(names[i]) {
				exact += tensor.Size(sh)
			}
		}
		side, channels := 0, 0
		if arch.NeedsImage(a) {
			side, channels = s.InputShape[0], s.InputShape[2]
		}
		est := arch.ParamCount(a, float64(tensor.Size(s.InputShape)), side, channels, s.NumClasses, s.Hidden)
		if math.Abs(est-float64(exact)) > 0.01*float64(exact) {
			t.Errorf("%s: arch.ParamCount %v, the network has %d parameters", a, est, exact)
		}
		if (len(s.InputShape) == 3) != arch.NeedsImage(a) {
			t.Errorf("%s: NeedsImage %v for input %v", a, arch.NeedsImage(a), s.InputShape)
		}
		if hasBN := slices.ContainsFunc(names, IsRunningStat); hasBN != arch.HasBatchNorm(a) {
			t.Errorf("%s: arch.HasBatchNorm %v, running statistics %v", a, arch.HasBatchNorm(a), hasBN)
		}
		// The archs the manifest lets feature-based methods run on expose as many
		// features as their classifier has inputs.
		if slices.Contains(arch.Features, a) {
			m, err := NewModel("", s)
			if err != nil {
				t.Fatal(err)
			}
			in := shapes[slices.Index(names, "classifier.weight")][0]
			if !m.HasFeatures() || m.FeatureDim() != in {
				t.Errorf("%s: HasFeatures %v, FeatureDim %d; the classifier has %d inputs", a, m.HasFeatures(), m.FeatureDim(), in)
			}
			m.Close()
		}
	}
	for _, a := range []string{arch.CNN4, arch.FedAvgCNN} {
		least := arch.MinSide(a)
		for _, side := range []int{least - 1, least, 28, 33} {
			s := ModelSpec{Arch: a, InputShape: []int{side, side, 3}, NumClasses: 10}
			names, shapes, err := s.ParamShapes()
			if (err == nil) != (side >= least) {
				t.Errorf("%s at %d×%d: error %v, arch.MinSide %d", a, side, side, err, least)
				continue
			}
			if err != nil {
				continue
			}
			p := arch.PooledSide(a, side)
			if i := slices.Index(names, "fc1.weight"); !slices.Equal(shapes[i], []int{p * p * arch.Conv2, arch.FC}) {
				t.Errorf("%s at %d×%d: fc1.weight %v, arch.PooledSide %d", a, side, side, shapes[i], p)
			}
		}
	}
}
