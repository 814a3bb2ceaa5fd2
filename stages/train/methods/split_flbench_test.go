package methods

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// buildMethod makes method from the catalogue's defaults with the given overrides.
func buildMethod(t *testing.T, method string, params map[string]float64, options map[string]string) train.Method {
	t.Helper()
	r := &manifest.Run{Method: method, MethodName: method}
	r.Params, r.Options = manifest.DefaultParams(method)
	for k, v := range params {
		r.Params[k] = v
	}
	for k, v := range options {
		r.Options[k] = v
	}
	m, err := train.NewMethod(r)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLGFedAvgFLBenchLayers: cnn4's tensors are conv1, conv2, fc1 and classifier, weight
// and bias each (model/model.go's layers), so FL-bench's split by layer count makes
// conv1.* global with num_global_layers 1 and conv1.*, conv2.* with 2; everything later
// is personal. The paper split is the reverse of FedPer's: everything but classifier.*.
func TestLGFedAvgFLBenchLayers(t *testing.T) {
	like := model.ModelSpec{Arch: model.ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}.Init(1)
	global := func(m tensor.List) []string {
		var out []string
		for _, tt := range m {
			ones, total := count(tensor.List{tt})
			switch ones {
			case 0:
				out = append(out, tt.Name)
			case total:
			default:
				t.Errorf("%s is partly personal", tt.Name)
			}
		}
		return out
	}
	for _, c := range []struct {
		layers float64
		want   []string
	}{
		{1, []string{"conv1.weight", "conv1.bias"}},
		{2, []string{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias"}},
	} {
		m := buildMethod(t, "lgfedavg", map[string]float64{"num_global_layers": c.layers}, map[string]string{"impl": "flbench"})
		if got := global(m.(*split).mask(like)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("num_global_layers %v: global tensors %v, want %v", c.layers, got, c.want)
		}
	}
	paper := buildMethod(t, "lgfedavg", nil, nil)
	if got := global(paper.(*split).mask(like)); !reflect.DeepEqual(got, []string{"classifier.weight", "classifier.bias"}) {
		t.Errorf("paper: global tensors %v, want the classifier's", got)
	}
}

// TestLGFedAvgFLBenchBatchNormLayers: on the ResNet-18 the layers start conv1 (no bias),
// bn1, layer1.0.conv1, ...; a BatchNorm layer's running statistics go with its layer, as
// FL-bench's `buffers: global` makes them parameters: with num_global_layers 2, conv1 and
// all four bn1 tensors are global, and every later layer's statistics are personal.
func TestLGFedAvgFLBenchBatchNormLayers(t *testing.T) {
	like := model.ModelSpec{Arch: model.ArchResNet18, InputShape: []int{6, 6, 3}, NumClasses: 3, Width: 2}.Init(1)
	m := buildMethod(t, "lgfedavg", map[string]float64{"num_global_layers": 2}, map[string]string{"impl": "flbench"})
	mask := m.(*split).mask(like)
	var global []string
	for _, tt := range mask {
		ones, total := count(tensor.List{tt})
		switch {
		case ones == 0:
			global = append(global, tt.Name)
		case ones != total:
			t.Errorf("%s is partly personal", tt.Name)
		}
	}
	want := []string{"conv1.weight", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var"}
	if !reflect.DeepEqual(global, want) {
		t.Errorf("global tensors %v, want %v", global, want)
	}
	if i := mask.Find("layer1.0.bn1.running_var"); i < 0 || mask[i].Data[0] != 1 {
		t.Error("layer1.0.bn1's running variance is not personal")
	}
}

// TestSplitFLBenchAveragesEverything: under flbench the server averages every parameter by
// training-set size, personal ones included, and a client without a copy of its own is
// the average whole. Clients 0 (1 sample, all ones) and 1 (3 samples, all fives) upload;
// the average is (1·1 + 3·5)/4 = 4 everywhere; client 0 keeps its classifier 1, client 1
// its 5, and client 2, which never trained, is all 4.
func TestSplitFLBenchAveragesEverything(t *testing.T) {
	filled := func(v float32) tensor.List {
		var l tensor.List
		for _, n := range []string{"conv1.weight", "conv1.bias", "classifier.weight", "classifier.bias"} {
			l = append(l, tensor.Tensor{Name: n, Shape: []int{1}, Data: []float32{v}})
		}
		return l
	}
	// On these tensors FL-bench's LG-FedAvg (first layer global) and FedPer (classifier
	// personal) split alike; both average everything under flbench.
	for _, method := range []string{"lgfedavg", "fedper"} {
		m := buildMethod(t, method, nil, map[string]string{"impl": "flbench"})
		st := &train.State{Global: filled(0)}
		m.Init(st, 3)
		if err := m.Finish(st, map[int]train.Upload{0: {Params: filled(1)}, 1: {Params: filled(5)}}, map[int]int{0: 1, 1: 3}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(st.Global, filled(4)) {
			t.Errorf("%s: global %v, want all 4", method, st.Global)
		}
		for c, head := range []float32{1, 5, 4} {
			want := filled(4)
			want[2].Data[0], want[3].Data[0] = head, head
			if got := m.EvalModel(st, c); !reflect.DeepEqual(got, want) {
				t.Errorf("%s client %d: %v, want conv1 4 and classifier %v", method, c, got, head)
			}
		}
	}
	// FedPer's paper form averages the body only: the global classifier stays initial (0)
	// and a client that never trained keeps the initial head.
	m := buildMethod(t, "fedper", nil, nil)
	st := &train.State{Global: filled(0)}
	m.Init(st, 3)
	if err := m.Finish(st, map[int]train.Upload{0: {Params: filled(1)}, 1: {Params: filled(5)}}, map[int]int{0: 1, 1: 3}); err != nil {
		t.Fatal(err)
	}
	if got := m.EvalModel(st, 2); got[0].Data[0] != 4 || got[2].Data[0] != 0 {
		t.Errorf("fedper paper, untrained client: %v, want conv1 4 and the initial classifier 0", got)
	}
}

// TestFedRepFLBenchOneOptimizer: FL-bench's FedRep trains with one optimizer whose frozen
// part has no gradient (see split.Train). The reference here is that optimizer: one
// session whose mask is switched from the head to the body after local_epochs −
// train_body_epochs = 2 epochs, its momentum buffers kept across the switch; fedpipe's
// flbench round must equal it bit for bit. The paper schedule (head_epochs 1, then all 3
// local epochs of body) must not.
func TestFedRepFLBenchOneOptimizer(t *testing.T) {
	spec := model.ModelSpec{Arch: model.ArchMLP, InputShape: []int{4}, NumClasses: 3, Hidden: []int{5}}
	m, err := model.NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := rngForTest()
	x := make([]float32, 10*4)
	y := make([]int32, 10)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for i := range y {
		y[i] = int32(r.IntN(3))
	}
	opt := model.SGD{LR: 0.1, Momentum: 0.7}
	l := train.NewLocal(train.LocalConfig{Model: m, Optimizer: opt, TrainX: x, TrainY: y, Epochs: 3, BatchSize: 4, Seed: 5, Round: 1, Rounds: 1})
	init := spec.Init(2)
	st := &train.State{Global: init}
	meth := buildMethod(t, "fedrep", map[string]float64{"head_epochs": 1}, map[string]string{"impl": "flbench"})
	meth.Init(st, 1)
	u, err := meth.Train(l, st, 0)
	if err != nil {
		t.Fatal(err)
	}

	head := meth.(*split).mask(init)
	s, err := m.NewSession(init, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	step := func(_ int, bx []float32, by []int32) error { _, err := s.Step(bx, by); return err }
	if err := s.SetMask(head); err != nil {
		t.Fatal(err)
	}
	if err := l.Batches(2, "fedrep-head", step); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMask(invert(head)); err != nil {
		t.Fatal(err)
	}
	if err := l.Batches(1, "shuffle", step); err != nil {
		t.Fatal(err)
	}
	want, err := s.Params()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(u.Params, want) {
		t.Error("flbench FedRep differs from one optimizer over 2 head epochs then 1 body epoch")
	}
	if reflect.DeepEqual(tensorsOf(want, func(n string) bool { return n == "fc1.weight" }), tensorsOf(init, func(n string) bool { return n == "fc1.weight" })) {
		t.Error("the body never trained")
	}
	paper := buildMethod(t, "fedrep", map[string]float64{"head_epochs": 1}, nil)
	pst := &train.State{Global: init}
	paper.Init(pst, 1)
	pu, err := paper.Train(l, pst, 0)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(pu.Params, want) {
		t.Error("the paper schedule equals FL-bench's")
	}
	// Evaluation fine-tunes the head alone for head_epochs under flbench only.
	if e, mk, ok := meth.(train.Finetuner).Finetune(init); !ok || e != 1 || !reflect.DeepEqual(mk, head) {
		t.Errorf("flbench fine-tuning: %d epochs, ok %v", e, ok)
	}
	if _, _, ok := paper.(train.Finetuner).Finetune(init); ok {
		t.Error("paper FedRep fine-tunes the head on its own")
	}
}
