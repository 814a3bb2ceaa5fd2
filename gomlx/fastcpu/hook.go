package fastcpu

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// executor has the layout of simplego's (unexported) nodeExecutor type.
type executor = func(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool) (*simplego.Buffer, error)

// simplegoExecutors is simplego's table of op implementations, indexed by op type.
//
//go:linkname simplegoExecutors github.com/gomlx/gomlx/backends/simplego.nodeExecutors
var simplegoExecutors [backends.OpTypeLast]executor

var (
	// simplegoDotGeneral is simplego's own DotGeneral, used for other backends and dtypes.
	simplegoDotGeneral executor
	// simplegoSlice and simplegoConcatenate are simplego's Slice and Concatenate.
	simplegoSlice, simplegoConcatenate executor
	// simplegoAdd, simplegoSub and simplegoMul are simplego's elementwise Add, Sub and Mul.
	simplegoAdd, simplegoSub, simplegoMul executor
	// simplego's Where, Max, comparisons, logical ops and reductions.
	simplegoWhere, simplegoMax, simplegoGreaterThan, simplegoEqual executor
	simplegoLogicalAnd, simplegoLogicalOr, simplegoLogicalNot      executor
	simplegoReduceSum, simplegoReduceMax, simplegoGather           executor
	simplegoScatterSum, simplegoArgMinMax                          executor
	simplegoBroadcastInDim                                         executor
	hookInstalled                                                  bool
	hookError                                                      string
)

func init() {
	if err := checkNodeLayout(); err != nil {
		hookError = err.Error()
		return
	}
	hooks := []struct {
		op       backends.OpType
		original *executor
		ours     executor
	}{
		{backends.OpTypeDotGeneral, &simplegoDotGeneral, execDotGeneral},
		{backends.OpTypeSlice, &simplegoSlice, execSlice},
		{backends.OpTypeConcatenate, &simplegoConcatenate, execConcatenate},
		{backends.OpTypeAdd, &simplegoAdd, binaryExec(opAdd, &simplegoAdd)},
		{backends.OpTypeSub, &simplegoSub, binaryExec(opSub, &simplegoSub)},
		{backends.OpTypeMul, &simplegoMul, binaryExec(opMul, &simplegoMul)},
		{backends.OpTypeGather, &simplegoGather, execGather},
		{backends.OpTypeScatterSum, &simplegoScatterSum, execScatterSum},
		{backends.OpTypeBroadcastInDim, &simplegoBroadcastInDim, execBroadcastInDim},
		{backends.OpTypeArgMinMax, &simplegoArgMinMax, execArgMinMax},
		{backends.OpTypeWhere, &simplegoWhere, execWhere},
		{backends.OpTypeMax, &simplegoMax, execMax},
		{backends.OpTypeGreaterThan, &simplegoGreaterThan, compareExec(true, &simplegoGreaterThan)},
		{backends.OpTypeEqual, &simplegoEqual, compareExec(false, &simplegoEqual)},
		{backends.OpTypeLogicalAnd, &simplegoLogicalAnd, logicalExec(true, &simplegoLogicalAnd)},
		{backends.OpTypeLogicalOr, &simplegoLogicalOr, logicalExec(false, &simplegoLogicalOr)},
		{backends.OpTypeLogicalNot, &simplegoLogicalNot, execLogicalNot},
		{backends.OpTypeReduceSum, &simplegoReduceSum, reduceExec(backends.OpTypeReduceSum, &simplegoReduceSum)},
		{backends.OpTypeReduceMax, &simplegoReduceMax, reduceExec(backends.OpTypeReduceMax, &simplegoReduceMax)},
	}
	for _, h := range hooks {
		if *h.original = simplegoExecutors[h.op]; *h.original == nil {
			hookError = fmt.Sprintf("simplego's %s implementation was not found (GoMLX version changed?)", h.op)
			return
		}
	}
	for _, h := range hooks {
		simplegoExecutors[h.op] = h.ours
	}
	hookInstalled = true
}

var (
	intSliceType = reflect.TypeOf([]int(nil))
	shapeType    = reflect.TypeOf(shapes.Shape{})
)

// checkNodeLayout checks that simplego.Node has the private fields read here: data (an
// interface holding the op's parameters) and shape (the op's output shape).
func checkNodeLayout() error {
	t := reflect.TypeOf(simplego.Node{})
	if f, ok := t.FieldByName("data"); !ok || f.Type.Kind() != reflect.Interface {
		return fmt.Errorf("simplego.Node has no data field (GoMLX version changed?)")
	}
	if f, ok := t.FieldByName("shape"); !ok || f.Type != shapeType {
		return fmt.Errorf("simplego.Node has no shape field (GoMLX version changed?)")
	}
	return nil
}

// private returns an accessible copy of the (possibly unexported) field name of the
// addressable struct value s, or an invalid value if there is none.
func private(s reflect.Value, name string) reflect.Value {
	f := s.FieldByName(name)
	if !f.IsValid() {
		return f
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// nodeData returns the dynamic value of a node's private data field.
func nodeData(node *simplego.Node) reflect.Value {
	return private(reflect.ValueOf(node).Elem(), "data").Elem()
}

// nodeShape returns a node's output shape.
func nodeShape(node *simplego.Node) shapes.Shape {
	return private(reflect.ValueOf(node).Elem(), "shape").Interface().(shapes.Shape)
}

// intSlices reads the []int fields names of the struct pointed to by data (an op's
// parameters).
func intSlices(data reflect.Value, names ...string) ([][]int, error) {
	if data.Kind() != reflect.Pointer || data.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("node data is %v, not a pointer to a struct", data.Kind())
	}
	s := data.Elem()
	out := make([][]int, len(names))
	for i, name := range names {
		f := private(s, name)
		if !f.IsValid() || f.Type() != intSliceType {
			return nil, fmt.Errorf("node data %v has no []int field %s (GoMLX version changed?)", s.Type(), name)
		}
		out[i] = f.Interface().([]int)
	}
	return out, nil
}

// dotParams are the axes of a DotGeneral node.
type dotParams struct {
	lhsContracting, lhsBatch, rhsContracting, rhsBatch []int
}

// nodeParams reads the axes of a DotGeneral node from simplego's private node data.
func nodeParams(node *simplego.Node) (dotParams, error) {
	v, err := intSlices(nodeData(node), "lhsContractingAxes", "lhsBatchAxes", "rhsContractingAxes", "rhsBatchAxes")
	if err != nil {
		return dotParams{}, err
	}
	return dotParams{v[0], v[1], v[2], v[3]}, nil
}

// execDotGeneral replaces simplego's DotGeneral: float32 products on fpfast backends run on
// package gemm, everything else on simplego's implementation.
func execDotGeneral(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool) (*simplego.Buffer, error) {
	b := lookup(engine)
	if b == nil {
		return simplegoDotGeneral(engine, node, inputs, inputsOwned)
	}
	lhsShape, err := engine.BufferShape(inputs[0])
	if err != nil {
		return nil, err
	}
	rhsShape, err := engine.BufferShape(inputs[1])
	if err != nil {
		return nil, err
	}
	if lhsShape.DType != dtypes.Float32 || rhsShape.DType != dtypes.Float32 {
		return simplegoDotGeneral(engine, node, inputs, inputsOwned)
	}
	p, err := nodeParams(node)
	if err != nil {
		return nil, fmt.Errorf("%s DotGeneral: %w", Name, err)
	}
	lhsFlat, err := engine.BufferData(inputs[0])
	if err != nil {
		return nil, err
	}
	rhsFlat, err := engine.BufferData(inputs[1])
	if err != nil {
		return nil, err
	}
	lhs := newOperand(lhsFlat.([]float32), lhsShape.Dimensions, p.lhsContracting, p.lhsBatch)
	rhs := newOperand(rhsFlat.([]float32), rhsShape.Dimensions, p.rhsContracting, p.rhsBatch)
	if lhs.batch.size != rhs.batch.size || lhs.contract.size != rhs.contract.size {
		return nil, fmt.Errorf("%s DotGeneral: mismatched operands %s and %s", Name, lhsShape, rhsShape)
	}
	out := engine.NewBuffer(shapes.Make(dtypes.Float32, lhs.batch.size, lhs.cross.size, rhs.cross.size))
	if out == nil {
		return nil, fmt.Errorf("%s DotGeneral: backend is finalized", Name)
	}
	outFlat, err := engine.BufferData(out)
	if err != nil {
		return nil, err
	}
	dotGeneral(lhs, rhs, outFlat.([]float32), b.threads)
	return out, nil
}
