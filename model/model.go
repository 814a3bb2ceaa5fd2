package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model/arch"
)

// Architectures understood by ModelSpec.Arch (their names and shape facts live in package
// model/arch, which package manifest shares).
const (
	// ArchCNN4 is FedOBP's 4-layer CNN: conv5×5(32) → ReLU → maxpool2 → conv5×5(64) → ReLU →
	// maxpool2 → flatten → FC(512) → ReLU → FC(NumClasses); the same network as
	// shared/bench/torch_cnn4.py. Convolutions are "valid" (no padding), stride 1, with bias;
	// pooling floors odd sizes like PyTorch's MaxPool2d(2).
	ArchCNN4 = arch.CNN4
	// ArchMLP is a multi-layer perceptron: one FC+ReLU layer per entry of Hidden, then the
	// classifier.
	ArchMLP = arch.MLP
	// ArchLogReg is multinomial logistic regression: the classifier alone.
	ArchLogReg = arch.LogReg
	// ArchFedAvgCNN is FedAvg's CNN (McMahan et al. 2017), as DM-PFL uses for MNIST, FEMNIST
	// and CIFAR-10: like cnn4 but with "same" (2-pixel) padding, so fc1 sees the input's
	// size divided by 4.
	ArchFedAvgCNN = arch.FedAvgCNN
	// ArchResNet18 is the CIFAR ResNet-18: 3×3 stride-1 stem, no max-pool.
	ArchResNet18 = arch.ResNet18
	// ArchResNet18ImageNet is torchvision's ResNet-18 (the official FedSelect code's): 7×7
	// stride-2 stem and a 3×3 stride-2 max-pool.
	ArchResNet18ImageNet = arch.ResNet18ImageNet
)

// ModelSpec describes a model. InputShape is the shape of one sample: [H, W, C] (NHWC
// without the batch axis) for cnn4; any shape for mlp and logreg, which flatten it.
//
// Parameter names and layouts (all float32, row-major):
//
//	convN.weight       [5, 5, Cin, Cout]  kernel height, width, input channel, output channel (HWIO)
//	convN.bias         [Cout]
//	fcN.weight         [in, out]          hidden layer N (1-based); y = x·W + b
//	fcN.bias           [out]
//	classifier.weight  [in, NumClasses]   the last layer of every architecture
//	classifier.bias    [NumClasses]
//
// fedavgcnn has the same names (its convolutions pad by 2). The ResNet-18s use torchvision's
// state_dict names, with the fully connected layer renamed classifier:
//
//	conv1.weight                      [k, k, C, 64]  stem (k = 3, or 7 for resnet18_imagenet)
//	bn1.weight, bn1.bias              [64]           BatchNorm scale γ and shift β
//	bn1.running_mean, bn1.running_var [64]           BatchNorm running statistics (not trained)
//	layerS.B.conv1.weight, .bn1.*, .conv2.weight, .bn2.*   stage S in 1..4, block B in 0..1
//	layerS.0.downsample.0.weight      [1, 1, cin, cout]    projection shortcut (S ≥ 2)
//	layerS.0.downsample.1.*                                its BatchNorm
//	classifier.weight [512, NumClasses], classifier.bias
//
// Running statistics are tensors like any other (checkpoints and aggregation see them) but
// SGD never changes them: a training step replaces them with PyTorch's momentum update, and
// masks and weight decay do not apply (see IsRunningStat).
//
// For cnn4 the input of fc1 is the second pooled feature map flattened in (h, w, c) order,
// so fc1.weight has 64·side·side rows with side = ((H-4)/2-4)/2 (floors). (PyTorch's Linear
// stores [out, in] and flattens NCHW in (c, h, w) order; converting needs a transpose and a
// row permutation.) Params lists the tensors in a fixed order: by layer, weight then bias.
type ModelSpec struct {
	Arch       string
	InputShape []int
	NumClasses int
	Hidden     []int
	// Width is the ResNet-18 first-stage width (stages are Width·{1, 2, 4, 8}); 0 means
	// 64, the real ResNet-18. Smaller widths keep tests and quick experiments cheap.
	Width int
	// FrozenBN trains with BatchNorm as in evaluation: training steps normalize with the
	// running statistics and leave them unchanged (gradients flow through γ, β and the
	// input). This is PyTorch training a model left in eval() mode, as the official
	// FedSelect code does from its second round. No effect on networks without BatchNorm.
	FrozenBN bool
	// InputChannels is the number of channels the ResNet-18s' first convolution takes; 0
	// means the data's (InputShape's last). With one-channel data and InputChannels 3 the
	// grayscale channel is repeated three times before the stem, as FL-bench's ResNet
	// forward does (x.broadcast_to(b, 3, h, w)), so conv1.weight is [k, k, 3, w] and an
	// ImageNet-pretrained stem fits. Other architectures must leave it 0.
	InputChannels int
}

// layerKind distinguishes the layers of the internal network description.
type layerKind int

const (
	layerConv layerKind = iota // conv5×5 valid + bias, then maxpool2 and ReLU.
	layerFC                    // dense; ReLU unless it is the classifier.
)

// layer is one parametrized layer of a network; its parameters are weight then bias.
type layer struct {
	kind layerKind
	name string
	// conv: input [h, w, cin], zero-padded by pad on every side → conv output
	// [h+2·pad-k+1, w+2·pad-k+1, cout] (convOut) → pooled [ph, pw, cout].
	h, w, cin, cout, k, pad int
	// fc: [in] → [out].
	in, out int
	relu    bool
	// native: a conv layer in the native graph form (native.go: XLA's convolution and
	// reduce-window), as on the XLA backends; otherwise im2col (net.go).
	native bool
}

// cnn4 layer constants (package arch holds the widths both CNNs share).
const (
	cnnKernel   = arch.Kernel
	cnnConv1Out = arch.Conv1
	cnnConv2Out = arch.Conv2
	cnnFC1Out   = arch.FC
	poolSize    = arch.Pool
)

// layers validates s and returns its layer list.
func (s ModelSpec) layers() ([]layer, error) {
	if s.NumClasses < 2 {
		return nil, fmt.Errorf("model %q: NumClasses must be at least 2, got %d", s.Arch, s.NumClasses)
	}
	if len(s.InputShape) == 0 {
		return nil, fmt.Errorf("model %q: empty InputShape", s.Arch)
	}
	for _, d := range s.InputShape {
		if d <= 0 {
			return nil, fmt.Errorf("model %q: InputShape %v has a non-positive dimension", s.Arch, s.InputShape)
		}
	}
	in := tensor.Size(s.InputShape)
	switch s.Arch {
	case ArchCNN4, ArchFedAvgCNN:
		if len(s.InputShape) != 3 {
			return nil, fmt.Errorf("model %s: InputShape must be [H, W, C], got %v", s.Arch, s.InputShape)
		}
		if len(s.Hidden) != 0 {
			return nil, fmt.Errorf("model %s: Hidden must be empty (the architecture is fixed), got %v", s.Arch, s.Hidden)
		}
		pad := 0
		if s.Arch == ArchFedAvgCNN {
			pad = arch.FedAvgPad
		}
		h, w, c := s.InputShape[0], s.InputShape[1], s.InputShape[2]
		var ls []layer
		for i, cout := range []int{cnnConv1Out, cnnConv2Out} {
			l := layer{kind: layerConv, name: fmt.Sprintf("conv%d", i+1), h: h, w: w, cin: c, cout: cout, k: cnnKernel, pad: pad, relu: true}
			oh, ow := l.convOut()
			if oh < poolSize || ow < poolSize {
				return nil, fmt.Errorf("model %s: input %v too small (conv%d output would be %dx%d)", s.Arch, s.InputShape, i+1, oh, ow)
			}
			ls = append(ls, l)
			h, w, c = oh/poolSize, ow/poolSize, cout
		}
		ls = append(ls,
			layer{kind: layerFC, name: "fc1", in: h * w * c, out: cnnFC1Out, relu: true},
			layer{kind: layerFC, name: "classifier", in: cnnFC1Out, out: s.NumClasses})
		return ls, nil
	case ArchMLP:
		var ls []layer
		for i, hdim := range s.Hidden {
			if hdim <= 0 {
				return nil, fmt.Errorf("model mlp: Hidden %v has a non-positive size", s.Hidden)
			}
			ls = append(ls, layer{kind: layerFC, name: fmt.Sprintf("fc%d", i+1), in: in, out: hdim, relu: true})
			in = hdim
		}
		return append(ls, layer{kind: layerFC, name: "classifier", in: in, out: s.NumClasses}), nil
	case ArchLogReg:
		if len(s.Hidden) != 0 {
			return nil, fmt.Errorf("model logreg: Hidden must be empty, got %v", s.Hidden)
		}
		return []layer{{kind: layerFC, name: "classifier", in: in, out: s.NumClasses}}, nil
	default:
		return nil, fmt.Errorf("unknown model architecture %q (known: %s, %s, %s, %s, %s, %s)", s.Arch,
			ArchCNN4, ArchFedAvgCNN, ArchResNet18, ArchResNet18ImageNet, ArchMLP, ArchLogReg)
	}
}

// convOut returns the spatial size of a convolution layer's output (before pooling).
func (l layer) convOut() (oh, ow int) {
	return l.h + 2*l.pad - l.k + 1, l.w + 2*l.pad - l.k + 1
}

// weightShape returns the shape of the layer's weight tensor and its fan-in.
func (l layer) weightShape() (shape []int, fanIn int) {
	if l.kind == layerConv {
		return []int{l.k, l.k, l.cin, l.cout}, l.k * l.k * l.cin
	}
	return []int{l.in, l.out}, l.in
}

// biasSize is the length of the layer's bias.
func (l layer) biasSize() int {
	if l.kind == layerConv {
		return l.cout
	}
	return l.out
}

// network returns the computation of the spec, validating it.
func (s ModelSpec) network() (network, error) {
	var tn *tapeNet
	var err error
	switch s.Arch {
	case ArchResNet18, ArchResNet18ImageNet:
		if s.NumClasses < 2 {
			return nil, fmt.Errorf("model %q: NumClasses must be at least 2, got %d", s.Arch, s.NumClasses)
		}
		tn, err = resnet18(s, s.Arch == ArchResNet18ImageNet)
	default:
		if s.InputChannels != 0 {
			return nil, fmt.Errorf("model %q: InputChannels is for the ResNet-18s only", s.Arch)
		}
		ls, err := s.layers()
		if err != nil {
			return nil, err
		}
		return seqNet(ls), nil
	}
	if err != nil {
		return nil, err
	}
	tn.frozenBN = s.FrozenBN
	for _, d := range s.InputShape {
		if d <= 0 {
			return nil, fmt.Errorf("model %q: InputShape %v has a non-positive dimension", s.Arch, s.InputShape)
		}
	}
	return tapeNetwork{net: tn, inputShape: slices.Clone(s.InputShape)}, nil
}

// ParamShapes returns the names and shapes of the model's parameters, in the canonical
// order used by Init and Session.Params.
func (s ModelSpec) ParamShapes() (names []string, shapes [][]int, err error) {
	net, err := s.network()
	if err != nil {
		return nil, nil, err
	}
	if tn, ok := net.(tapeNetwork); ok {
		for _, d := range tn.net.defs {
			names = append(names, d.name)
			shapes = append(shapes, slices.Clone(d.shape))
		}
		return names, shapes, nil
	}
	for _, l := range net.(seqNet) {
		ws, _ := l.weightShape()
		names = append(names, l.name+".weight", l.name+".bias")
		shapes = append(shapes, ws, []int{l.biasSize()})
	}
	return names, shapes, nil
}

// IsRunningStat reports whether a parameter name is a BatchNorm running statistic
// (name.running_mean, name.running_var): state carried with the model, never trained.
func IsRunningStat(name string) bool { return isRunningStat(name) }

// BatchNormParams returns the names of the model's BatchNorm tensors: the running
// statistics and the affine scale/shift (γ, β), in canonical order. Both are empty for
// models without BatchNorm.
func (s ModelSpec) BatchNormParams() (stats, affine []string, err error) {
	net, err := s.network()
	if err != nil {
		return nil, nil, err
	}
	tn, ok := net.(tapeNetwork)
	if !ok {
		return nil, nil, nil
	}
	for _, d := range tn.net.defs {
		if d.runningStats {
			stats = append(stats, d.name)
			base := strings.TrimSuffix(strings.TrimSuffix(d.name, ".running_mean"), ".running_var")
			if strings.HasSuffix(d.name, ".running_mean") {
				affine = append(affine, base+".weight", base+".bias")
			}
		}
	}
	return stats, affine, nil
}

// initStream is the PCG stream constant used by Init (any fixed value; changing it changes
// every initialization, so it is part of CodeVersion).
const initStream = 0x6665647069706531 // "fedpipe1"

// Init returns freshly initialized parameters, deterministically from seed, following
// PyTorch's defaults for Conv2d and Linear: weights ~ kaiming-uniform with a=√5, i.e.
// U(−1/√fanIn, 1/√fanIn), and biases ~ U(−1/√fanIn, 1/√fanIn). The ResNet-18s follow
// torchvision: convolutions ~ N(0, 2/(k·k·cout)), BatchNorm γ = 1, β = 0, running mean 0
// and variance 1, the classifier PyTorch's Linear default. Values are drawn with a PCG
// generator seeded by (seed, initStream), tensor by tensor in parameter order, element by
// element in row-major order, so the same seed always gives the same bits. It panics if the
// spec is invalid (see Validate).
func (s ModelSpec) Init(seed uint64) tensor.List {
	net, err := s.network()
	if err != nil {
		panic(err)
	}
	return initNetwork(net, s.Arch, seed)
}

// initNetwork is Init of the network net of architecture a.
func initNetwork(net network, a string, seed uint64) tensor.List {
	rng := rand.New(rand.NewPCG(seed, initStream))
	uniform := func(t tensor.Tensor, bound float64) tensor.Tensor {
		for i := range t.Data {
			t.Data[i] = float32((2*rng.Float64() - 1) * bound)
		}
		return t
	}
	var out tensor.List
	if tn, ok := net.(tapeNetwork); ok {
		for _, d := range tn.net.defs {
			t := tensor.New(d.name, d.shape...)
			switch d.init {
			case initTorchUniform:
				uniform(t, 1/math.Sqrt(float64(d.fanIn)))
			case initKaimingFanOut:
				std := math.Sqrt(2 / float64(d.fanOut))
				for i := range t.Data {
					t.Data[i] = float32(rng.NormFloat64() * std)
				}
			case initOnes:
				for i := range t.Data {
					t.Data[i] = 1
				}
			}
			out = append(out, t)
		}
		return out
	}
	for _, l := range net.(seqNet) {
		ws, fanIn := l.weightShape()
		// kaiming_uniform_(a=√5): gain = √(2/(1+a²)) = √(1/3); bound = gain·√(3/fanIn) = 1/√fanIn.
		gain := math.Sqrt(2.0 / (1 + 5.0))
		wBound := gain * math.Sqrt(3.0/float64(fanIn))
		bBound := 1 / math.Sqrt(float64(fanIn))
		if a == ArchFedAvgCNN {
			// The same bound in exact arithmetic, rounded as fedavgcnn's weights have always
			// been drawn (the two float64 roundings differ for fan-ins such as 25 and 4096).
			wBound = bBound
		}
		out = append(out,
			uniform(tensor.New(l.name+".weight", ws...), wBound),
			uniform(tensor.New(l.name+".bias", l.biasSize()), bBound))
	}
	return out
}

// Validate reports whether the spec describes a supported model.
func (s ModelSpec) Validate() error {
	_, err := s.network()
	return err
}

// orderParams checks that params holds exactly the model's tensors (any order, matched by
// name) with the right shapes, and returns them in canonical order.
func (s ModelSpec) orderParams(params tensor.List) (tensor.List, error) {
	names, shapes, err := s.ParamShapes()
	if err != nil {
		return nil, err
	}
	if len(params) != len(names) {
		return nil, fmt.Errorf("model %s: got %d parameter tensors, want %d (%v)", s.Arch, len(params), len(names), names)
	}
	out := make(tensor.List, len(names))
	for i, name := range names {
		j := params.Find(name)
		if j < 0 {
			return nil, fmt.Errorf("model %s: parameter %q missing", s.Arch, name)
		}
		t := params[j]
		if !slices.Equal(t.Shape, shapes[i]) {
			return nil, fmt.Errorf("model %s: parameter %q has shape %v, want %v", s.Arch, name, t.Shape, shapes[i])
		}
		if err := t.Check(); err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}
