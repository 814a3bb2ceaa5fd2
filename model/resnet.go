package model

import (
	"fmt"
	"strings"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
)

// paramInit says how Init fills a parameter.
type paramInit int

const (
	// initTorchUniform is PyTorch's default for Conv2d and Linear weights and biases:
	// U(−1/√fanIn, 1/√fanIn) (kaiming_uniform with a = √5 for weights).
	initTorchUniform paramInit = iota
	// initKaimingFanOut is torchvision ResNet's conv init: N(0, 2/fanOut) with
	// fanOut = k·k·cout (kaiming_normal_, mode="fan_out", nonlinearity="relu").
	initKaimingFanOut
	initOnes
	initZeros
)

// paramDef is one parameter tensor of a tape network.
type paramDef struct {
	name         string
	shape        []int
	init         paramInit
	fanIn        int
	fanOut       int
	runningStats bool // BatchNorm running statistics: state, not trained.
}

// tapeNet is a network whose forward pass is Go code over the tape ops (tape.go), with
// named parameters. The pass is split in two: the body maps a batch to its penultimate
// features [b, d], and the head is the dense layer classifier.weight [d, classes],
// classifier.bias (every tape network ends with it), which maps them to the logits.
type tapeNet struct {
	defs  []paramDef
	index map[string]int
	body  func(f *fwd, x *tv) *tv // returns the features [b, d]: the classifier's input
	// frozenBN: training passes use BatchNorm's running statistics (ModelSpec.FrozenBN).
	frozenBN bool
}

// classifierName is the head of every network: the dense layer producing the logits.
const classifierName = "classifier"

// fwd is one forward pass of a tapeNet: the tape, the parameters as tape values, and the
// new running statistics produced in training.
type fwd struct {
	t      *tape
	net    *tapeNet
	params []*tv
	state  []*Node
}

// p returns the parameter called name; a name the net does not define is a bug.
func (f *fwd) p(name string) *tv {
	i, ok := f.net.index[name]
	if !ok {
		panic(fmt.Sprintf("gomlx: network uses undefined parameter %q", name))
	}
	return f.params[i]
}

// conv applies the convolution name.weight (and name.bias when bias).
func (f *fwd) conv(name string, x *tv, k, stride, pad int, bias bool) *tv {
	var b *tv
	if bias {
		b = f.p(name + ".bias")
	}
	return f.t.conv(x, f.p(name+".weight"), b, k, stride, pad)
}

// bn applies the BatchNorm called name and records its new running statistics.
func (f *fwd) bn(name string, x *tv) *tv {
	mi, vi := f.net.index[name+".running_mean"], f.net.index[name+".running_var"]
	y, m, v := f.t.batchNorm(x, f.p(name+".weight"), f.p(name+".bias"), f.params[mi].n, f.params[vi].n)
	f.state[mi], f.state[vi] = m, v
	return y
}

// defBuilder collects the parameter definitions of a tapeNet.
type defBuilder struct{ defs []paramDef }

func (d *defBuilder) conv(name string, k, cin, cout int, bias, kaiming bool) {
	init := initTorchUniform
	if kaiming {
		init = initKaimingFanOut
	}
	d.defs = append(d.defs, paramDef{name: name + ".weight", shape: []int{k, k, cin, cout}, init: init, fanIn: k * k * cin, fanOut: k * k * cout})
	if bias {
		d.defs = append(d.defs, paramDef{name: name + ".bias", shape: []int{cout}, init: initTorchUniform, fanIn: k * k * cin})
	}
}

func (d *defBuilder) bn(name string, c int) {
	d.defs = append(d.defs,
		paramDef{name: name + ".weight", shape: []int{c}, init: initOnes},
		paramDef{name: name + ".bias", shape: []int{c}, init: initZeros},
		paramDef{name: name + ".running_mean", shape: []int{c}, init: initZeros, runningStats: true},
		paramDef{name: name + ".running_var", shape: []int{c}, init: initOnes, runningStats: true})
}

func (d *defBuilder) dense(name string, in, out int) {
	d.defs = append(d.defs,
		paramDef{name: name + ".weight", shape: []int{in, out}, init: initTorchUniform, fanIn: in},
		paramDef{name: name + ".bias", shape: []int{out}, init: initTorchUniform, fanIn: in})
}

// net finishes the definitions with the classifier (d features → classes) and returns
// the network whose body is body.
func (d *defBuilder) net(features, classes int, body func(f *fwd, x *tv) *tv) *tapeNet {
	d.dense(classifierName, features, classes)
	n := &tapeNet{defs: d.defs, index: map[string]int{}, body: body}
	for i, p := range d.defs {
		n.index[p.name] = i
	}
	return n
}

// resnetBlock is one BasicBlock of ResNet-18.
type resnetBlock struct {
	name              string
	cin, cout, stride int
}

// downsample reports whether the block needs the 1×1 projection shortcut.
func (b resnetBlock) downsample() bool { return b.stride != 1 || b.cin != b.cout }

// resnetDefaultWidth is ResNet-18's first stage width (64/128/256/512).
const resnetDefaultWidth = 64

// resnet18 builds ResNet-18 (He et al. 2016, torchvision's layout and names): a stem,
// four stages of two BasicBlocks with widths w, 2w, 4w, 8w (strides 1, 2, 2, 2), 1×1
// stride-2 projection shortcuts with BatchNorm where the shape changes, global average
// pooling and the classifier. imagenet selects torchvision's stem (conv 7×7 stride 2
// padding 3 → BN → ReLU → max-pool 3×3 stride 2 padding 1); otherwise the CIFAR stem
// (conv 3×3 stride 1 padding 1 → BN → ReLU, no max-pool). Convolutions have no bias.
func resnet18(s ModelSpec, imagenet bool) (*tapeNet, error) {
	if len(s.InputShape) != 3 {
		return nil, fmt.Errorf("model %s: InputShape must be [H, W, C], got %v", s.Arch, s.InputShape)
	}
	if len(s.Hidden) != 0 {
		return nil, fmt.Errorf("model %s: Hidden must be empty (the architecture is fixed), got %v", s.Arch, s.Hidden)
	}
	w := s.Width
	if w == 0 {
		w = resnetDefaultWidth
	}
	if w < 0 {
		return nil, fmt.Errorf("model %s: Width must be positive, got %d", s.Arch, s.Width)
	}
	cin, repeat := s.InputShape[2], 1
	switch {
	case s.InputChannels == 0 || s.InputChannels == cin:
	case cin == 1 && s.InputChannels > 1:
		cin, repeat = s.InputChannels, s.InputChannels
	default:
		return nil, fmt.Errorf("model %s: InputChannels %d for %d-channel data (only one channel can be repeated)", s.Arch, s.InputChannels, cin)
	}
	stemK, stemStride, stemPad := 3, 1, 1
	if imagenet {
		stemK, stemStride, stemPad = 7, 2, 3
	}
	var d defBuilder
	d.conv("conv1", stemK, cin, w, false, true)
	d.bn("bn1", w)
	var blocks []resnetBlock
	c := w
	for stage, width := range []int{w, 2 * w, 4 * w, 8 * w} {
		for i := range 2 {
			stride := 1
			if stage > 0 && i == 0 {
				stride = 2
			}
			b := resnetBlock{name: fmt.Sprintf("layer%d.%d", stage+1, i), cin: c, cout: width, stride: stride}
			d.conv(b.name+".conv1", 3, b.cin, b.cout, false, true)
			d.bn(b.name+".bn1", b.cout)
			d.conv(b.name+".conv2", 3, b.cout, b.cout, false, true)
			d.bn(b.name+".bn2", b.cout)
			if b.downsample() {
				d.conv(b.name+".downsample.0", 1, b.cin, b.cout, false, true)
				d.bn(b.name+".downsample.1", b.cout)
			}
			blocks = append(blocks, b)
			c = width
		}
	}
	return d.net(c, s.NumClasses, func(f *fwd, x *tv) *tv {
		if repeat > 1 { // the input needs no gradient: a plain graph op, off the tape
			copies := make([]*Node, repeat)
			for i := range copies {
				copies[i] = x.n
			}
			x = &tv{n: Concatenate(copies, -1)}
		}
		h := f.t.relu(f.bn("bn1", f.conv("conv1", x, stemK, stemStride, stemPad, false)))
		if imagenet {
			h = f.t.maxPool(h, 3, 2, 1)
		}
		for _, b := range blocks {
			out := f.t.relu(f.bn(b.name+".bn1", f.conv(b.name+".conv1", h, 3, b.stride, 1, false)))
			out = f.bn(b.name+".bn2", f.conv(b.name+".conv2", out, 3, 1, 1, false))
			short := h
			if b.downsample() {
				short = f.bn(b.name+".downsample.1", f.conv(b.name+".downsample.0", h, 1, b.stride, 0, false))
			}
			h = f.t.relu(f.t.add(out, short))
		}
		return f.t.globalAvgPool(h)
	}), nil
}

// run builds the body's forward pass on x [b, InputShape...] and returns it with the
// features [b, d]; training records the tape and uses batch statistics.
func (n *tapeNet) run(params []*Node, x *Node, inputShape []int, training bool) (*fwd, *tv) {
	f := &fwd{t: &tape{record: training, frozenBN: n.frozenBN}, net: n, params: make([]*tv, len(params)), state: make([]*Node, len(params))}
	for i, p := range params {
		f.params[i] = &tv{n: p, needGrad: training && !n.defs[i].runningStats}
	}
	b := x.Shape().Dimensions[0]
	dims := append([]int{b}, inputShape...)
	return f, f.net.body(f, &tv{n: Reshape(x, dims...)})
}

// head applies the classifier to the features: the logits [b, classes].
func (f *fwd) head(feats *tv) *tv {
	return f.t.dense(feats, f.p(classifierName+".weight"), f.p(classifierName+".bias"))
}

// featureDim is the number of features the body produces: the classifier's input size.
func (n *tapeNet) featureDim() int {
	return n.defs[n.index[classifierName+".weight"]].shape[0]
}

// tapeNetwork adapts a tapeNet to the network interface.
type tapeNetwork struct {
	net        *tapeNet
	inputShape []int
}

func (t tapeNetwork) numParams() int { return len(t.net.defs) }

func (t tapeNetwork) trainPass(params []*Node, x, labels *Node) (loss *Node, grads, state []*Node) {
	loss, grads, state, _ = t.featurePass(params, x, labels, nil)
	return loss, grads, state
}

func (t tapeNetwork) featurePass(params []*Node, x, labels *Node, pen penalty) (loss *Node, grads, state []*Node, feats *Node) {
	f, fv := t.net.run(params, x, t.inputShape, true)
	logits := f.head(fv)
	perSample, dLogits, count := crossEntropy(logits.n, labels)
	loss = Div(ReduceAllSum(perSample), count)
	if pen != nil {
		value, dFeats := pen(fv.n)
		loss = Add(loss, value)
		fv.g = dFeats // the head's backward adds the cross-entropy's share
	}
	logits.g = dLogits
	f.t.backward()
	grads = make([]*Node, len(params))
	for i, p := range f.params {
		switch {
		case t.net.defs[i].runningStats:
			if f.state[i] == nil {
				panic(fmt.Sprintf("gomlx: running statistic %q is never updated", t.net.defs[i].name))
			}
		case p.g == nil:
			panic(fmt.Sprintf("gomlx: parameter %q gets no gradient", t.net.defs[i].name))
		default:
			grads[i] = p.g
		}
	}
	return loss, grads, f.state, fv.n
}

func (t tapeNetwork) evalLogits(params []*Node, x *Node) *Node {
	f, feats := t.net.run(params, x, t.inputShape, false)
	return f.head(feats).n
}

func (t tapeNetwork) featureDim() int { return t.net.featureDim() }

func (t tapeNetwork) evalFeatures(params []*Node, x *Node) *Node {
	_, feats := t.net.run(params, x, t.inputShape, false)
	return feats.n
}

// isRunningStat reports whether a parameter name is a BatchNorm running statistic.
func isRunningStat(name string) bool {
	return strings.HasSuffix(name, ".running_mean") || strings.HasSuffix(name, ".running_var")
}
