package model

import "testing"

// MACs of the tape networks against hand counts: FedAvg's CNN layer by layer, and the
// totals of the two ResNet-18s (0.555 G for the CIFAR variant on 32×32, 1.814 G for
// torchvision's on 224×224 with 1,000 classes, the figures usually quoted for them).
func TestMACsOfTapeNetworks(t *testing.T) {
	m, err := ModelSpec{Arch: ArchFedAvgCNN, InputShape: []int{28, 28, 1}, NumClasses: 10}.MACs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"conv1.weight":      28 * 28 * 25 * 1 * 32,
		"conv2.weight":      14 * 14 * 25 * 32 * 64,
		"fc1.weight":        7 * 7 * 64 * 512,
		"classifier.weight": 512 * 10,
	}
	if len(m) != len(want) {
		t.Errorf("fedavgcnn MACs %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("fedavgcnn %s: %d MACs, want %d", k, m[k], v)
		}
	}
	for _, c := range []struct {
		arch    string
		input   []int
		classes int
		want    int64
	}{
		{ArchResNet18, []int{32, 32, 3}, 10, 555_422_720},
		{ArchResNet18ImageNet, []int{224, 224, 3}, 1000, 1_814_073_344},
	} {
		m, err := ModelSpec{Arch: c.arch, InputShape: c.input, NumClasses: c.classes}.MACs()
		if err != nil {
			t.Fatal(err)
		}
		total := int64(0)
		for _, v := range m {
			total += v
		}
		if total != c.want {
			t.Errorf("%s on %v: %d MACs, want %d", c.arch, c.input, total, c.want)
		}
		// 20 convolutions (17 3×3 or stem, 3 projection shortcuts) and the classifier.
		if len(m) != 21 {
			t.Errorf("%s: MACs for %d tensors, want 21", c.arch, len(m))
		}
	}
}

// TrainFLOPs of cnn4 on 28×28×1 against a hand count of its products: forward, weight
// gradients, and input gradients of all layers but conv1 (which reads the images), 2 FLOPs
// per multiply-accumulate; and of ResNet-18 on 32×32×3, whose stem (3·3·3·64 weights at
// 32·32 positions) is the layer without an input gradient.
func TestTrainFLOPs(t *testing.T) {
	conv1 := int64(24 * 24 * 25 * 1 * 32)
	conv2 := int64(8 * 8 * 25 * 32 * 64)
	fc1, fc2 := int64(4*4*64*512), int64(512*10)
	got, err := ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}.TrainFLOPs()
	if err != nil {
		t.Fatal(err)
	}
	fwd := conv1 + conv2 + fc1 + fc2
	if want := 2 * (fwd + fwd + (fwd - conv1)); got != want {
		t.Errorf("cnn4 TrainFLOPs = %d, want %d", got, want)
	}
	got, err = ModelSpec{Arch: ArchResNet18, InputShape: []int{32, 32, 3}, NumClasses: 10}.TrainFLOPs()
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(2 * (3*555_422_720 - 32*32*27*64)); got != want {
		t.Errorf("resnet18 TrainFLOPs = %d, want %d", got, want)
	}
}

// BatchStats after a gradient holds the running statistics a compiled training step on
// the same batch sets (with learning rate 0 the step changes nothing else), and a model
// without BatchNorm has none.
func TestBatchStatsMatchATrainingStep(t *testing.T) {
	spec := ModelSpec{Arch: ArchResNet18, InputShape: []int{8, 8, 3}, NumClasses: 3, Width: 2}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	params := spec.Init(7)
	x := make([]float32, 4*8*8*3)
	for i := range x {
		x[i] = float32(i%17)/8 - 1
	}
	y := []int32{0, 1, 2, 1}
	if _, err := m.Gradient(params, x, y); err != nil {
		t.Fatal(err)
	}
	stats := m.BatchStats()
	if len(stats) == 0 {
		t.Fatal("no running statistics after a ResNet-18 gradient")
	}
	s, err := m.NewSession(params, SGD{LR: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Step(x, y); err != nil {
		t.Fatal(err)
	}
	stepped, err := s.Params()
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	for _, st := range stats {
		want := stepped[stepped.Find(st.Name)].Data
		before := params[params.Find(st.Name)].Data
		for i := range want {
			if d := st.Data[i] - want[i]; d > 1e-6 || d < -1e-6 {
				t.Fatalf("%s[%d]: BatchStats %v, training step %v", st.Name, i, st.Data[i], want[i])
			}
			changed = changed || st.Data[i] != before[i]
		}
	}
	if !changed {
		t.Error("running statistics did not move with the batch")
	}
	cnn, err := NewModel("", ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer cnn.Close()
	cp := ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}.Init(1)
	if _, err := cnn.Gradient(cp, make([]float32, 28*28), []int32{3}); err != nil {
		t.Fatal(err)
	}
	if n := len(cnn.BatchStats()); n != 0 {
		t.Errorf("cnn4 has %d running statistics", n)
	}
}
