package shift

import (
	"errors"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// A test-split sample keeps its own CIFAR-10-C counterpart; any other sample gets a block
// image of its class that is not one of the client's counterparts; the draw repeats per
// seed and client and changes with them.
func TestCIFAR10CIndices(t *testing.T) {
	// 20 pooled samples: 0..11 official train, 12..19 official test (block images 0..7).
	labels := []int32{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2 /* test: */, 0, 1, 2, 0, 1, 2, 0, 1}
	const testStart = 12
	block := labels[testStart:]
	test := []int{1, 3, 6, 9, 12, 14, 15, 19}
	idx, own, err := CIFAR10CIndices(test, labels, testStart, block, 7, 2)
	if err != nil {
		t.Fatal(err)
	}
	if own != 4 {
		t.Errorf("own = %d, want the 4 test-split samples", own)
	}
	for p, i := range test {
		j := idx[p]
		if j < 0 || j >= len(block) || block[j] != labels[i] {
			t.Fatalf("sample %d (class %d) → block image %d of class %d", i, labels[i], j, block[j])
		}
		if i >= testStart && j != i-testStart {
			t.Errorf("test-split sample %d → block image %d, want its own %d", i, j, i-testStart)
		}
		if i < testStart && (j == 0 || j == 3) {
			t.Errorf("train-split sample %d drew block image %d, a counterpart the client already holds", i, j)
		}
	}
	again, _, _ := CIFAR10CIndices(test, labels, testStart, block, 7, 2)
	if !reflect.DeepEqual(idx, again) {
		t.Error("not deterministic")
	}
	differs := false
	for s := int64(0); s < 20 && !differs; s++ {
		other, _, _ := CIFAR10CIndices(test, labels, testStart, block, s, 3)
		differs = !reflect.DeepEqual(idx, other)
	}
	if !differs {
		t.Error("the draw ignores seed and client")
	}
	// Class 0's three train samples need draws, but the block holds only images 0, 3, 6
	// of that class and the client owns 0 and 3: draws cycle over what is left.
	idx, own, err = CIFAR10CIndices([]int{0, 3, 6, 12, 15}, labels, testStart, block, 1, 0)
	if err != nil || own != 2 || idx[0] != 6 || idx[1] != 6 || idx[2] != 6 {
		t.Errorf("draws %v own %d (%v), want image 6 three times", idx, own, err)
	}
	// No block image of a class needed: invalid input.
	_, _, err = CIFAR10CIndices([]int{2}, labels, testStart, []int32{0, 1}, 1, 0)
	if !errors.Is(err, manifest.ErrInvalid) {
		t.Errorf("class without CIFAR-10-C images: %v", err)
	}
}
