package fastcpu

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
)

// OpTime is the time simplego's executors (ours and its own) spent in one kind of op while
// RecordOpTimes was on: every execution of an op type with the same output and input shapes.
type OpTime struct {
	Op    string // "DotGeneral (Float32)[1 800 64] <(Float32)[2048 800] <(Float32)[2048 64]"
	Calls int
	Time  time.Duration
}

// RecordOpTimes times every op that executes on a simplego engine (fpfast and fpcpu alike)
// until the function it returns is called; that function puts the executors back and
// returns the times, largest first. It is a diagnostic for profiling a step op by op
// (BenchmarkStepOps in package model): call it, and stop it, while no graph is executing,
// since it swaps simplego's table of executors. The times include the executors' calls
// only, not simplego's bookkeeping between them.
func RecordOpTimes() (stop func() []OpTime) {
	var mu sync.Mutex
	totals := map[string]*OpTime{}
	saved := simplegoExecutors
	for op, f := range saved {
		if f == nil {
			continue
		}
		simplegoExecutors[op] = func(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
			inputsOwned []bool) (*simplego.Buffer, error) {
			key := opKey(backends.OpType(op), node)
			start := time.Now()
			out, err := f(engine, node, inputs, inputsOwned)
			elapsed := time.Since(start)
			mu.Lock()
			t := totals[key]
			if t == nil {
				t = &OpTime{Op: key}
				totals[key] = t
			}
			t.Calls++
			t.Time += elapsed
			mu.Unlock()
			return out, err
		}
	}
	return func() []OpTime {
		simplegoExecutors = saved
		mu.Lock()
		defer mu.Unlock()
		out := make([]OpTime, 0, len(totals))
		for _, t := range totals {
			out = append(out, *t)
		}
		slices.SortFunc(out, func(a, b OpTime) int {
			return cmp.Or(cmp.Compare(b.Time, a.Time), strings.Compare(a.Op, b.Op))
		})
		return out
	}
}

// opKey names a node's op type, output shape and input shapes.
func opKey(op backends.OpType, node *simplego.Node) string {
	var b strings.Builder
	b.WriteString(op.String())
	b.WriteString(" ")
	b.WriteString(nodeShape(node).String())
	if in := private(reflect.ValueOf(node).Elem(), "inputs"); in.IsValid() {
		if inputs, ok := in.Interface().([]*simplego.Node); ok {
			for _, i := range inputs {
				b.WriteString(" <")
				b.WriteString(nodeShape(i).String())
			}
		}
	}
	return b.String()
}
