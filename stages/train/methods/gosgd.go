package methods

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// goSGD applies the run's optimizer in Go to gradients computed batch by batch, for the
// methods whose loss or parametrization the compiled training steps do not cover (FedPAC's
// feature alignment, FLUTE's head regularizers, FLOCO's simplex). Semantics are PyTorch's
// SGD, as model.SGD's:
//
//	buf = Momentum·buf + (g + WeightDecay·θ);  θ -= LR·buf
//
// with buffers starting at zero. Entries whose mask is 0 keep their value exactly.
// BatchNorm running statistics are not trained: step leaves them alone and setStats gives
// them the values the gradient's forward pass computed, as a compiled step would.
type goSGD struct {
	opt model.SGD
	buf map[string][]float32
}

func newGoSGD(opt model.SGD) *goSGD { return &goSGD{opt: opt, buf: map[string][]float32{}} }

// step updates params in place with grads (matched by name; a tensor without a gradient
// is left alone), scaling the gradient by scale (FLOCO's α_m) and using the momentum
// buffer named key+tensor name. Each entry takes the operations of the formula above in
// its order (d = scale·g + WeightDecay·θ; buf = Momentum·buf + d; θ = θ − LR·buf). It
// reports whether every entry it updated is finite afterwards.
func (s *goSGD) step(key string, params, grads, mask tensor.List, scale float32) (finite bool) {
	lr, mom, wd := s.opt.LR, s.opt.Momentum, s.opt.WeightDecay
	bad := false
	for _, p := range params {
		gi := grads.Find(p.Name)
		if gi < 0 || model.IsRunningStat(p.Name) {
			continue
		}
		var m []float32
		if mask != nil {
			if mi := mask.Find(p.Name); mi >= 0 {
				m = mask[mi].Data
			}
		}
		buf := s.buf[key+p.Name]
		if buf == nil {
			buf = make([]float32, len(p.Data))
			s.buf[key+p.Name] = buf
		}
		theta := p.Data
		g, buf := grads[gi].Data[:len(theta)], buf[:len(theta)]
		if m == nil {
			for i, v := range theta {
				b := mom*buf[i] + (scale*g[i] + wd*v)
				buf[i] = b
				nv := v - lr*b
				theta[i] = nv
				if nv-nv != 0 {
					bad = true
				}
			}
			continue
		}
		m = m[:len(theta)]
		for i, v := range theta {
			if m[i] == 0 {
				continue
			}
			b := mom*buf[i] + (scale*g[i] + wd*v)
			buf[i] = b
			nv := v - lr*b
			theta[i] = nv
			if nv-nv != 0 {
				bad = true
			}
		}
	}
	return !bad
}

// finite reports whether every value of data is finite (v − v is +0 for a finite v, NaN
// for ±Inf and NaN).
func finite(data []float32) bool {
	for _, v := range data {
		if v-v != 0 {
			return false
		}
	}
	return true
}

// setStats copies the running statistics of stats (model.Model.BatchStats, after the
// batch's gradient) into the tensors of params with the same names.
func setStats(params, stats tensor.List) {
	for _, t := range stats {
		if i := params.Find(t.Name); i >= 0 {
			copy(params[i].Data, t.Data)
		}
	}
}

// checkLoss turns a non-finite loss into the error the compiled training gives.
func checkLoss(loss float32, epoch int) error {
	if math.IsNaN(float64(loss)) || math.IsInf(float64(loss), 0) {
		return fmt.Errorf("training diverged (loss %v at epoch %d): lower the learning rate", loss, epoch+1)
	}
	return nil
}

// headMask returns 1 on the classifier's tensors (the head) and 0 on the body.
func headMask(like tensor.List) tensor.List {
	m := train.ZeroMask(like)
	for _, t := range m {
		if isClassifier(t.Name) {
			for i := range t.Data {
				t.Data[i] = 1
			}
		}
	}
	return m
}
