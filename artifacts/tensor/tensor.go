// Package tensor holds the plain-Go representation of model parameters and masks that
// every package outside model/ works with: a named, shaped slice of float32 values.
package tensor

import "fmt"

// Tensor is one named parameter (or mask, or score) tensor, stored row-major.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// Size is the number of elements the shape describes.
func Size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// New returns a zero tensor of the given name and shape.
func New(name string, shape ...int) Tensor {
	return Tensor{Name: name, Shape: append([]int(nil), shape...), Data: make([]float32, Size(shape))}
}

// Clone returns a deep copy of t.
func (t Tensor) Clone() Tensor {
	return Tensor{Name: t.Name, Shape: append([]int(nil), t.Shape...), Data: append([]float32(nil), t.Data...)}
}

// Check reports an error if the shape has a negative dimension or the data
// length does not match the shape.
func (t Tensor) Check() error {
	if err := checkShape(t.Shape); err != nil {
		return fmt.Errorf("tensor %q: %v", t.Name, err)
	}
	if len(t.Data) != Size(t.Shape) {
		return fmt.Errorf("tensor %q: shape %v needs %d values, has %d", t.Name, t.Shape, Size(t.Shape), len(t.Data))
	}
	return nil
}

// List is an ordered set of named tensors: a model's parameters, a mask, a checkpoint.
type List []Tensor

// Clone returns a deep copy of every tensor in l.
func (l List) Clone() List {
	out := make(List, len(l))
	for i, t := range l {
		out[i] = t.Clone()
	}
	return out
}

// NumElements is the total number of values in l.
func (l List) NumElements() int {
	n := 0
	for _, t := range l {
		n += len(t.Data)
	}
	return n
}

// Check reports the first tensor in l that fails Tensor.Check.
func (l List) Check() error {
	for _, t := range l {
		if err := t.Check(); err != nil {
			return err
		}
	}
	return nil
}

// Find returns the index of the tensor named name, or -1.
func (l List) Find(name string) int {
	for i, t := range l {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// checkShape reports an error if shape has a negative dimension.
func checkShape(shape []int) error {
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("shape %v has a negative dimension", shape)
		}
	}
	return nil
}
