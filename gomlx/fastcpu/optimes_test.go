package fastcpu

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestRecordOpTimes runs a graph of an Add and a Mul twice while recording, once after: the
// record names both ops with their shapes, counts two calls each, and stop puts every
// executor back.
func TestRecordOpTimes(t *testing.T) {
	fast, err := backends.NewWithConfig(Name)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Finalize()
	before := make([]uintptr, len(simplegoExecutors))
	for i, f := range simplegoExecutors {
		before[i] = reflect.ValueOf(f).Pointer()
	}
	exec, err := NewExec(fast, func(x *Node) *Node { return Mul(Add(x, x), x) })
	if err != nil {
		t.Fatal(err)
	}
	x := tensors.FromFlatDataAndDimensions([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	stop := RecordOpTimes()
	for range 2 {
		exec.MustExec(x)
	}
	times := stop()
	exec.MustExec(x)
	calls := map[string]int{}
	for _, o := range times {
		if o.Time < 0 {
			t.Errorf("%s: negative time %v", o.Op, o.Time)
		}
		calls[strings.Fields(o.Op)[0]] += o.Calls
		if strings.HasPrefix(o.Op, "Add ") && o.Op != "Add (Float32)[2 3] <(Float32)[2 3] <(Float32)[2 3]" {
			t.Errorf("Add recorded as %q", o.Op)
		}
	}
	if calls["Add"] != 2 || calls["Mul"] != 2 {
		t.Errorf("recorded calls %v, want 2 Adds and 2 Muls", calls)
	}
	for i, f := range simplegoExecutors {
		if reflect.ValueOf(f).Pointer() != before[i] {
			t.Fatalf("executor %s not restored", backends.OpType(i))
		}
	}
}
