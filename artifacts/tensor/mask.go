package tensor

import (
	"fmt"
	"math/bits"
)

// A Mask is a named, shaped tensor of booleans packed as a bitset: element i
// (row-major, as for Tensor) is bit i%8 of Bits[i/8], least significant bit
// first. len(Bits) is always MaskBytes(Size(Shape)) and the unused high bits
// of the last byte are zero, so equal masks have equal Bits.
type Mask struct {
	Name  string
	Shape []int
	Bits  []byte
}

// MaskBytes is the number of bytes a mask of n elements occupies.
func MaskBytes(n int) int { return (n + 7) / 8 }

// NewMask returns an all-false mask of the given name and shape.
func NewMask(name string, shape ...int) Mask {
	return Mask{Name: name, Shape: append([]int(nil), shape...), Bits: make([]byte, MaskBytes(Size(shape)))}
}

// MaskOf returns the mask that is true exactly where t is non-zero (NaN counts
// as non-zero).
func MaskOf(t Tensor) Mask {
	m := NewMask(t.Name, t.Shape...)
	for i, v := range t.Data {
		if v != 0 {
			m.Bits[i>>3] |= 1 << (i & 7)
		}
	}
	return m
}

// Len is the number of elements of m.
func (m Mask) Len() int { return Size(m.Shape) }

// Get reports element i of m. It panics if i is out of range.
func (m Mask) Get(i int) bool {
	if i < 0 || i >= m.Len() {
		panic(fmt.Sprintf("tensor: mask %q index %d out of range [0, %d)", m.Name, i, m.Len()))
	}
	return m.Bits[i>>3]&(1<<(i&7)) != 0
}

// Set sets element i of m to v. It panics if i is out of range.
func (m Mask) Set(i int, v bool) {
	if i < 0 || i >= m.Len() {
		panic(fmt.Sprintf("tensor: mask %q index %d out of range [0, %d)", m.Name, i, m.Len()))
	}
	if v {
		m.Bits[i>>3] |= 1 << (i & 7)
	} else {
		m.Bits[i>>3] &^= 1 << (i & 7)
	}
}

// Count is the number of true elements of m.
func (m Mask) Count() int {
	n := 0
	for _, b := range m.Bits {
		n += bits.OnesCount8(b)
	}
	return n
}

// Tensor returns m as a float32 tensor of 0s and 1s with m's name and shape.
func (m Mask) Tensor() Tensor {
	t := New(m.Name, m.Shape...)
	for i := range t.Data {
		if m.Bits[i>>3]&(1<<(i&7)) != 0 {
			t.Data[i] = 1
		}
	}
	return t
}

// Clone returns a deep copy of m.
func (m Mask) Clone() Mask {
	return Mask{Name: m.Name, Shape: append([]int(nil), m.Shape...), Bits: append([]byte(nil), m.Bits...)}
}

// Check reports an error if m's shape has a negative dimension, if Bits has
// the wrong length for the shape, or if the padding bits are not zero.
func (m Mask) Check() error {
	if err := checkShape(m.Shape); err != nil {
		return fmt.Errorf("mask %q: %v", m.Name, err)
	}
	n := Size(m.Shape)
	if len(m.Bits) != MaskBytes(n) {
		return fmt.Errorf("mask %q: shape %v needs %d bytes of bits, has %d", m.Name, m.Shape, MaskBytes(n), len(m.Bits))
	}
	if r := n & 7; r != 0 && m.Bits[len(m.Bits)-1]>>r != 0 {
		return fmt.Errorf("mask %q: padding bits after element %d are not zero", m.Name, n)
	}
	return nil
}
