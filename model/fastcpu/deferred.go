package fastcpu

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// This file fuses a scalar product into the addition or subtraction that consumes it:
// v·x followed by (v·x) ± y or y − (v·x). The SGD step of every parameter is two such
// pairs (model/net.go, sgdStepGraph): buf' = mom·buf + d and θ' = θ − lr·buf'. Run op by op,
// each product is a pass over the parameter that writes a tensor the next op reads back;
// fused, the product of a block of 256 values is taken into a stack buffer and added at
// once, so the update reads each operand once and writes once (issue 48: the products were
// 7.7% of a cnn4 step's CPU time).
//
// The product op (Mul of a float32 scalar on the left by a tensor) is deferred: its
// executor returns a buffer holding x (x's own buffer when the Mul owns it, else an unfilled
// one with x read from its node's buffer, which stays untouched because x is an output of
// the graph) and records v. Its consumer computes the product. This is only done when the
// consumer is certain to be one of this file's fused paths: the Mul is not an output of the
// graph and is used exactly once, by an Add or Sub (the binary executor of binary.go) of two
// tensors of its shape. Every value is computed by the same loops in the same order as op
// by op (opMul.applyScalarLeft into the block, then the Add or Sub's op.apply), so the
// results are the same bits.

// deferMinSize is the smallest product deferred: below it, finding the consumer costs more
// than the pass it saves.
const deferMinSize = 1024

// deferBlock is the number of values a fused op computes at a time (a multiple of 8, so the
// assembly loops and the Go tails do the same values as op by op).
const deferBlock = 256

// deferredMul is a product not yet computed: v·src, standing for producer's output.
type deferredMul struct {
	producer *simplego.Node
	v        float32
	src      []float32
}

var (
	// deferred maps the output buffer of a deferred Mul to its product.
	deferred sync.Map // *simplego.Buffer → *deferredMul
	// noDefer computes every product op by op (tests and benchmarks compare both).
	noDefer = false
	// deferredCount counts the products deferred (tests check that the fused path ran).
	deferredCount atomic.Int64
)

// Offsets of the private fields of simplego's Node and Builder read here (see
// checkGraphLayout); deferring is off when they are not as expected.
var (
	offNodeIdx, offNodeInputs, offNodeOpType, offNodeBuilder uintptr
	offBuilderNodes, offBuilderOutputs                       uintptr
	graphLayoutOK                                            = checkGraphLayout()
)

// checkGraphLayout finds the offsets of Node.builderIdx, Node.inputs, Node.opType,
// Node.builder, Builder.nodes and Builder.outputs, checking their types.
func checkGraphLayout() bool {
	nodes := reflect.TypeOf([]*simplego.Node(nil))
	field := func(t reflect.Type, name string, want reflect.Type) (uintptr, bool) {
		f, ok := t.FieldByName(name)
		return f.Offset, ok && f.Type == want && len(f.Index) == 1
	}
	nt, bt := reflect.TypeOf(simplego.Node{}), reflect.TypeOf(simplego.Builder{})
	var ok [6]bool
	offNodeIdx, ok[5] = field(nt, "builderIdx", reflect.TypeOf(0))
	offNodeInputs, ok[0] = field(nt, "inputs", nodes)
	offNodeOpType, ok[1] = field(nt, "opType", reflect.TypeOf(backends.OpType(0)))
	offNodeBuilder, ok[2] = field(nt, "builder", reflect.TypeOf((*simplego.Builder)(nil)))
	offBuilderNodes, ok[3] = field(bt, "nodes", nodes)
	offBuilderOutputs, ok[4] = field(bt, "outputs", nodes)
	return ok == [6]bool{true, true, true, true, true, true}
}

// nodeInputs returns the input nodes of n.
func nodeInputs(n *simplego.Node) []*simplego.Node {
	return *(*[]*simplego.Node)(unsafe.Add(unsafe.Pointer(n), offNodeInputs))
}

// nodeOp returns the op type of n.
func nodeOp(n *simplego.Node) backends.OpType {
	return *(*backends.OpType)(unsafe.Add(unsafe.Pointer(n), offNodeOpType))
}

// nodeIndex returns n's position in its graph's nodes.
func nodeIndex(n *simplego.Node) int {
	return *(*int)(unsafe.Add(unsafe.Pointer(n), offNodeIdx))
}

// graphNodes returns all nodes of n's graph (in creation order) and its outputs.
func graphNodes(n *simplego.Node) (all, outputs []*simplego.Node) {
	b := *(**simplego.Builder)(unsafe.Add(unsafe.Pointer(n), offNodeBuilder))
	if b == nil {
		return nil, nil
	}
	p := unsafe.Pointer(b)
	return *(*[]*simplego.Node)(unsafe.Add(p, offBuilderNodes)), *(*[]*simplego.Node)(unsafe.Add(p, offBuilderOutputs))
}

// isOutput reports whether n is among outputs.
func isOutput(n *simplego.Node, outputs []*simplego.Node) bool {
	for _, o := range outputs {
		if o == n {
			return true
		}
	}
	return false
}

// fusableConsumer reports whether node (a Mul of shape) is not an output and has exactly one
// use, as an operand of an Add or Sub whose operands and output all have shape: the uses
// binaryExec fuses. It also reports whether node's operand x is an output of the graph.
func fusableConsumer(node *simplego.Node, shape shapes.Shape) (fusable, xIsOutput bool) {
	all, outputs := graphNodes(node)
	idx := nodeIndex(node)
	if idx < 0 || idx >= len(all) || all[idx] != node || isOutput(node, outputs) {
		return false, false
	}
	var consumer *simplego.Node
	uses := 0
	for _, c := range all[idx+1:] { // A node is created after its inputs.
		for _, in := range nodeInputs(c) {
			if in == node {
				uses++
				consumer = c
			}
		}
	}
	if uses != 1 {
		return false, false
	}
	if op := nodeOp(consumer); op != backends.OpTypeAdd && op != backends.OpTypeSub {
		return false, false
	}
	if !nodeShape(consumer).Equal(shape) {
		return false, false
	}
	for _, in := range nodeInputs(consumer) {
		if !nodeShape(in).Equal(shape) {
			return false, false
		}
	}
	return true, isOutput(nodeInputs(node)[1], outputs)
}

// deferMul defers the product v·y of a float32 Mul node with a one-element left operand
// when fusableConsumer allows it and y's values are sure to stay as they are until the
// consumer runs (y's buffer is owned by the Mul, or y is an output of the graph). It returns
// the Mul's output buffer, or nil (nothing changed) to compute the product now.
func deferMul(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, inputsOwned []bool,
	shape shapes.Shape, x, y []float32) *simplego.Buffer {
	if noDefer || !graphLayoutOK || len(x) != 1 || len(y) != shape.Size() || len(y) < deferMinSize ||
		shape.DType != dtypes.Float32 || !sameShape(engine, inputs[1], shape) {
		return nil
	}
	fusable, yIsOutput := fusableConsumer(node, shape)
	if !fusable {
		return nil
	}
	var out *simplego.Buffer
	switch {
	case inputsOwned[1]:
		out, inputs[1] = inputs[1], nil // Holds y; the consumer multiplies it.
	case yIsOutput:
		if out = engine.NewBuffer(shape); out == nil {
			return nil
		}
	default:
		return nil
	}
	deferred.Store(out, &deferredMul{producer: node, v: x[0], src: y})
	deferredCount.Add(1)
	return out
}

// takeDeferred returns the deferred product standing for buf, the output of input node in,
// and forgets it; nil if buf holds computed values.
func takeDeferred(in *simplego.Node, buf *simplego.Buffer) *deferredMul {
	if !graphLayoutOK || nodeOp(in) != backends.OpTypeMul {
		return nil
	}
	d, ok := deferred.LoadAndDelete(buf)
	if !ok {
		return nil
	}
	if dm := d.(*deferredMul); dm.producer == in {
		return dm
	}
	return nil
}

// materialize computes a deferred product into its own buffer dst, as the Mul would have.
func (d *deferredMul) materialize(threads int, dst []float32) {
	elementwise(threads, len(dst), func(lo, hi int) { opMul.applyScalarLeft(dst[lo:hi], d.v, d.src[lo:hi]) })
}

// fused computes dst = x op y over [lo, hi) where the operand at position at (0: x, 1: y)
// is the deferred product d (the other operand's slice is used, that one's ignored), block
// by block: the product into a stack buffer by opMul.applyScalarLeft, then op.apply.
func (op binaryOp) fused(dst, x, y []float32, at int, d *deferredMul, lo, hi int) {
	var t [deferBlock]float32
	for s := lo; s < hi; s += deferBlock {
		e := min(s+deferBlock, hi)
		p := t[:e-s]
		opMul.applyScalarLeft(p, d.v, d.src[s:e])
		if at == 0 {
			op.apply(dst[s:e], p, y[s:e])
		} else {
			op.apply(dst[s:e], x[s:e], p)
		}
	}
}

// resolveDeferred handles the deferred products among the operands of an Add or Sub node:
// with exactly one, of the output's size and shape as the other operand, it computes the
// op fused and returns its output; otherwise it computes every deferred operand into its
// buffer (x and y are those buffers' values) and returns nil for the op to run as usual.
func resolveDeferred(engine *simplego.Backend, op binaryOp, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool, outShape shapes.Shape, x, y []float32) *simplego.Buffer {
	ins := nodeInputs(node)
	if len(ins) != 2 {
		return nil
	}
	d := [2]*deferredMul{takeDeferred(ins[0], inputs[0]), takeDeferred(ins[1], inputs[1])}
	if d[0] == nil && d[1] == nil {
		return nil
	}
	threads := threadsOf(engine)
	n := outShape.Size()
	if (d[0] == nil) != (d[1] == nil) && len(x) == n && len(y) == n && op != opMul {
		at := 0
		if d[1] != nil {
			at = 1
		}
		if out, dst := outputFor(engine, inputs, inputsOwned, outShape); out != nil {
			elementwise(threads, n, func(lo, hi int) { op.fused(dst, x, y, at, d[at], lo, hi) })
			return out
		}
	}
	if d[0] != nil {
		d[0].materialize(threads, x)
	}
	if d[1] != nil {
		d[1].materialize(threads, y)
	}
	return nil
}
