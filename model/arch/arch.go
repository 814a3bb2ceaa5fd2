// Package arch is the one home of the facts about fedpipe's model architectures that both
// the manifest (validation, memory estimates, before anything is loaded) and the model
// (building the networks) need: the names, which need image inputs, which expose their
// penultimate features, the smallest image side each takes, the widths of the two CNNs, and
// the parameter-count estimate. Pure Go with no dependencies, so that package manifest can
// use it without linking GoMLX; package model builds the actual parameters (ParamShapes,
// Init) from these facts.
package arch

import "slices"

// The architectures (manifest field model.arch; model.ModelSpec.Arch). Package model
// documents each network layer by layer.
const (
	// CNN4 is FedOBP's 4-layer CNN: two valid 5×5 convolutions, each with a 2×2 max-pool,
	// then FC(512) and the classifier.
	CNN4 = "cnn4"
	// FedAvgCNN is FedAvg's CNN (McMahan et al. 2017): like CNN4 with "same" padding.
	FedAvgCNN = "fedavgcnn"
	// ResNet18 is the CIFAR ResNet-18: 3×3 stride-1 stem, no max-pool.
	ResNet18 = "resnet18"
	// ResNet18ImageNet is torchvision's ResNet-18: 7×7 stride-2 stem and a stride-2 max-pool.
	ResNet18ImageNet = "resnet18_imagenet"
	// MLP is a multi-layer perceptron, one FC+ReLU layer per hidden width.
	MLP = "mlp"
	// LogReg is multinomial logistic regression: the classifier alone.
	LogReg = "logreg"
)

// Revisions holds, per architecture, the version of its computation when a change altered
// that architecture's results alone (a change to every network's bumps model.CodeVersion
// instead). Above 0 it enters the model's part of every stage key (pipeline's modelKey), so
// the architecture's cached and kept results go stale and no other's do. Why each number
// was bumped is in the commit that bumped it.
var Revisions = map[string]int{
	// 2: a chain of layers (model.ModelSpec.layers) instead of the tape: im2col rows in
	// pooled order with the padding as one zero row, col2im one ScatterSum, ReLU after the
	// pooling; the weight-gradient, bias-gradient and col2im sums take their terms in
	// another order.
	FedAvgCNN: 2,
}

// All lists every architecture.
var All = []string{CNN4, FedAvgCNN, ResNet18, ResNet18ImageNet, MLP, LogReg}

// NeedsImage reports whether architecture a takes H×W×C inputs (the convolutional
// networks); MLP and LogReg flatten any input.
func NeedsImage(a string) bool {
	switch a {
	case CNN4, FedAvgCNN, ResNet18, ResNet18ImageNet:
		return true
	}
	return false
}

// HasBatchNorm reports whether architecture a has BatchNorm layers (the ResNet-18s).
func HasBatchNorm(a string) bool { return a == ResNet18 || a == ResNet18ImageNet }

// Features lists the architectures whose penultimate features (the classifier's input)
// the model can compute: all of them. Methods that work on features (manifest's
// MethodDef.Features) run only on these.
var Features = slices.Clone(All)

// The two CNNs' layer widths: a Kernel×Kernel convolution to Conv1 channels, one to Conv2
// channels, each followed by a 2×2 max-pool (Pool), then FC hidden units and the classifier.
const (
	Kernel = 5
	Conv1  = 32
	Conv2  = 64
	FC     = 512
	Pool   = 2
	// FedAvgPad is FedAvgCNN's padding ("same" for a 5×5 kernel).
	FedAvgPad = 2
)

// MinSide is the smallest square image side architecture a can take (0: any): below it a
// valid convolution or a pooling would leave no pixel. The ResNets pad every layer.
func MinSide(a string) int {
	switch a {
	case CNN4:
		return 16 // conv 5 → pool 2 → conv 5 → pool 2 leaves at least 1×1
	case FedAvgCNN:
		return 4 // two 2×2 poolings
	}
	return 0
}

// PooledSide is the side of the feature map the CNN architecture a feeds its FC layer for
// an input of the given side (floors, as PyTorch's MaxPool2d); 0 for other architectures.
func PooledSide(a string, side int) int {
	switch a {
	case CNN4:
		return ((side-Kernel+1)/Pool - Kernel + 1) / Pool
	case FedAvgCNN:
		return side / Pool / Pool
	}
	return 0
}

// ResNet18Params approximates a ResNet-18's parameter count at width 64 without its
// classifier.
const ResNet18Params = 11.2e6

// ParamCount estimates the parameter count of architecture a for inputs of dim values
// (side×side×channels for images) and the given classes and hidden widths (MLP). It is
// exact for MLP and LogReg; for the CNNs it leaves out the biases of the hidden layers and
// for the ResNets it is ResNet18Params plus the classifier's weights, which the manifest's
// memory estimate needs no closer.
func ParamCount(a string, dim float64, side, channels, classes int, hidden []int) float64 {
	c := float64(classes)
	switch a {
	case LogReg:
		return dim*c + c
	case MLP:
		in, p := dim, 0.0
		for _, h := range hidden {
			p += in*float64(h) + float64(h)
			in = float64(h)
		}
		return p + in*c + c
	case CNN4, FedAvgCNN:
		s := float64(max(PooledSide(a, side), 1))
		return Kernel*Kernel*float64(channels)*Conv1 + Kernel*Kernel*Conv1*Conv2 + s*s*Conv2*FC + FC*c
	}
	return ResNet18Params + FC*c
}
