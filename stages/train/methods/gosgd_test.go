package methods

import (
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
)

// goSGD never trains or decays BatchNorm running statistics; setStats gives them the
// batch's values.
func TestGoSGDLeavesRunningStatistics(t *testing.T) {
	params := tensor.List{
		{Name: "bn1.weight", Shape: []int{2}, Data: []float32{1, 1}},
		{Name: "bn1.running_var", Shape: []int{2}, Data: []float32{1, 1}},
	}
	grads := tensor.List{
		{Name: "bn1.weight", Shape: []int{2}, Data: []float32{0.5, -0.5}},
		{Name: "bn1.running_var", Shape: []int{2}, Data: []float32{0, 0}},
	}
	opt := newGoSGD(model.SGD{LR: 0.1, WeightDecay: 0.5})
	opt.step("", params, grads, nil, 1)
	if got := params[1].Data; got[0] != 1 || got[1] != 1 {
		t.Errorf("running_var after a step with weight decay: %v, want unchanged [1 1]", got)
	}
	if got := params[0].Data; got[0] == 1 {
		t.Errorf("bn1.weight did not train: %v", got)
	}
	setStats(params, tensor.List{{Name: "bn1.running_var", Shape: []int{2}, Data: []float32{0.9, 1.2}}})
	if got := params[1].Data; got[0] != 0.9 || got[1] != 1.2 {
		t.Errorf("setStats: %v", got)
	}
}
