package fastcpu

import (
	"fmt"
	"math"
	"reflect"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// noAsm makes argExtreme run in Go only (tests compare both).
var noAsm = false

// execArgMinMax replaces simplego's ArgMax/ArgMin for float32 operands and int32 indices on
// fpfast backends (the max-pooling of package model's networks takes the ArgMax of each
// window's four rows). It gives simplego's answers exactly: the first extreme element wins
// ties, and a NaN takes the place of whatever came before it; but it keeps the running best
// values and indices with bit selects (8 lanes at a time in assembly on AVX2 CPUs), and
// splits the outer axes over the backend's threads.
func execArgMinMax(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool) (*simplego.Buffer, error) {
	outShape := nodeShape(node)
	src := float32Data(engine, inputs[0])
	inShape, err := engine.BufferShape(inputs[0])
	if lookup(engine) == nil || src == nil || err != nil || outShape.DType != dtypes.Int32 {
		return simplegoArgMinMax(engine, node, inputs, inputsOwned)
	}
	data := nodeData(node)
	if data.Kind() != reflect.Pointer || data.Elem().Kind() != reflect.Struct {
		return simplegoArgMinMax(engine, node, inputs, inputsOwned)
	}
	axisV, isMinV := private(data.Elem(), "axis"), private(data.Elem(), "isMin")
	if !axisV.IsValid() || axisV.Kind() != reflect.Int || !isMinV.IsValid() || isMinV.Kind() != reflect.Bool {
		return simplegoArgMinMax(engine, node, inputs, inputsOwned)
	}
	axis, isMin := int(axisV.Int()), isMinV.Bool()
	dims := inShape.Dimensions
	if axis < 0 || axis >= len(dims) || dims[axis] == 0 || dims[axis] >= 1<<31 {
		return simplegoArgMinMax(engine, node, inputs, inputsOwned)
	}
	outer, red, inner := 1, dims[axis], 1
	for _, d := range dims[:axis] {
		outer *= d
	}
	for _, d := range dims[axis+1:] {
		inner *= d
	}
	out := engine.NewBuffer(outShape)
	if out == nil {
		return nil, fmt.Errorf("%s ArgMinMax: backend is finalized", Name)
	}
	dst := dataOf[int32](engine, out)
	parallelFor(threadsOf(engine), outer, len(src), func(lo, hi int) {
		argExtreme(dst, src, lo, hi, red, inner, isMin)
	})
	return out, nil
}

// argExtreme writes, for each o in [lo, hi) and i in [0, inner), the index r in [0, red) of
// the extreme of src[(o·red + r)·inner + i] into dst[o·inner + i], as simplego's ArgMinMax
// does: start from r = 0 and move to r whenever its value is strictly better or NaN. On
// AVX2 CPUs the assembly does 8 lanes at a time (BenchmarkArgExtreme compares it with the Go
// loop below, which does the rest of a row and the ArgMin).
func argExtreme(dst []int32, src []float32, lo, hi, red, inner int, isMin bool) {
	// The assembly ArgMax takes the first multiple of 8 of each row; Go the rest.
	vec := 0
	if !isMin && hasArgMaxAVX2 && !noAsm {
		vec = inner &^ 7
	}
	var best []float32 // the Go loop's running extremes
	if vec < inner {
		best = make([]float32, inner)
	}
	for o := lo; o < hi; o++ {
		base := o * red * inner
		if vec > 0 {
			_ = src[base+(red-1)*inner+vec-1]
			_ = dst[o*inner+vec-1]
			argMaxAVX2(vec, &src[base], inner, red, &dst[o*inner])
			if vec == inner {
				continue
			}
		}
		copy(best[vec:], src[base+vec:base+inner])
		arg := dst[o*inner+vec : (o+1)*inner]
		clear(arg)
		for r := 1; r < red; r++ {
			row := src[base+r*inner+vec : base+(r+1)*inner]
			best := best[vec:]
			row = row[:len(best)]
			arg := arg[:len(best)]
			ri := uint32(r)
			for i, v := range row {
				b := best[i]
				var better, nan uint32
				if isMin {
					if v < b {
						better = 1
					}
				} else if v > b {
					better = 1
				}
				if v != v {
					nan = 1
				}
				mask := -(better | nan) // all ones where r takes over
				best[i] = math.Float32frombits(math.Float32bits(b)&^mask | math.Float32bits(v)&mask)
				arg[i] = int32(uint32(arg[i])&^mask | ri&mask)
			}
		}
	}
}
