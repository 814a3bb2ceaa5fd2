package model

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParamShapes(t *testing.T) {
	cases := []struct {
		spec   ModelSpec
		names  []string
		shapes [][]int
	}{
		{ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10},
			[]string{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight", "fc1.bias", "classifier.weight", "classifier.bias"},
			[][]int{{5, 5, 1, 32}, {32}, {5, 5, 32, 64}, {64}, {4 * 4 * 64, 512}, {512}, {512, 10}, {10}}},
		{ModelSpec{Arch: ArchCNN4, InputShape: []int{32, 32, 3}, NumClasses: 10},
			nil, [][]int{{5, 5, 3, 32}, {32}, {5, 5, 32, 64}, {64}, {5 * 5 * 64, 512}, {512}, {512, 10}, {10}}},
		{ModelSpec{Arch: ArchMLP, InputShape: []int{28, 28}, NumClasses: 10, Hidden: []int{200, 100}},
			[]string{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "classifier.weight", "classifier.bias"},
			[][]int{{784, 200}, {200}, {200, 100}, {100}, {100, 10}, {10}}},
		{ModelSpec{Arch: ArchLogReg, InputShape: []int{60}, NumClasses: 2},
			[]string{"classifier.weight", "classifier.bias"}, [][]int{{60, 2}, {2}}},
		{ModelSpec{Arch: ArchFedAvgCNN, InputShape: []int{28, 28, 1}, NumClasses: 62},
			[]string{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight", "fc1.bias", "classifier.weight", "classifier.bias"},
			[][]int{{5, 5, 1, 32}, {32}, {5, 5, 32, 64}, {64}, {7 * 7 * 64, 512}, {512}, {512, 62}, {62}}},
		{ModelSpec{Arch: ArchFedAvgCNN, InputShape: []int{32, 32, 3}, NumClasses: 10},
			nil, [][]int{{5, 5, 3, 32}, {32}, {5, 5, 32, 64}, {64}, {8 * 8 * 64, 512}, {512}, {512, 10}, {10}}},
	}
	for _, tc := range cases {
		names, shapes, err := tc.spec.ParamShapes()
		if err != nil {
			t.Fatalf("%+v: %v", tc.spec, err)
		}
		if tc.names != nil && !slices.Equal(names, tc.names) {
			t.Errorf("%+v: names %v, want %v", tc.spec, names, tc.names)
		}
		if !slices.EqualFunc(shapes, tc.shapes, slices.Equal) {
			t.Errorf("%+v: shapes %v, want %v", tc.spec, shapes, tc.shapes)
		}
	}
}

func TestSpecValidation(t *testing.T) {
	cases := []struct {
		spec ModelSpec
		want string
	}{
		{ModelSpec{Arch: "resnet", InputShape: []int{3}, NumClasses: 2}, "unknown model architecture"},
		{ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28}, NumClasses: 10}, "[H, W, C]"},
		{ModelSpec{Arch: ArchCNN4, InputShape: []int{10, 10, 1}, NumClasses: 10}, "too small"},
		{ModelSpec{Arch: ArchLogReg, InputShape: []int{4}, NumClasses: 1}, "NumClasses"},
		{ModelSpec{Arch: ArchMLP, InputShape: []int{4}, NumClasses: 3, Hidden: []int{0}}, "non-positive"},
		{ModelSpec{Arch: ArchResNet18, InputShape: []int{32, 32}, NumClasses: 10}, "[H, W, C]"},
		{ModelSpec{Arch: ArchResNet18, InputShape: []int{8, 8, 3}, NumClasses: 1}, "NumClasses"},
		{ModelSpec{Arch: ArchResNet18, InputShape: []int{8, 8, 3}, NumClasses: 10, Width: -1}, "Width"},
		{ModelSpec{Arch: ArchFedAvgCNN, InputShape: []int{3, 3, 1}, NumClasses: 10}, "too small"},
		{ModelSpec{Arch: ArchFedAvgCNN, InputShape: []int{8, 8, 1}, NumClasses: 10, Hidden: []int{5}}, "Hidden"},
	}
	for _, tc := range cases {
		err := tc.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want it to contain %q", tc.spec, err, tc.want)
		}
		if _, err := NewModel("", tc.spec); err == nil {
			t.Errorf("%+v: NewModel accepted an invalid spec", tc.spec)
		}
	}
}

func TestInitDeterministic(t *testing.T) {
	spec := ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	a, b, c := spec.Init(42), spec.Init(42), spec.Init(43)
	_, shapes, _ := spec.ParamShapes()
	for i := range a {
		if !slices.Equal(a[i].Shape, shapes[i]) || a[i].Check() != nil {
			t.Fatalf("%s: bad shape %v", a[i].Name, a[i].Shape)
		}
		for j := range a[i].Data {
			if math.Float32bits(a[i].Data[j]) != math.Float32bits(b[i].Data[j]) {
				t.Fatalf("%s[%d]: same seed gave %v and %v", a[i].Name, j, a[i].Data[j], b[i].Data[j])
			}
		}
		if slices.Equal(a[i].Data, c[i].Data) {
			t.Errorf("%s: seeds 42 and 43 gave identical values", a[i].Name)
		}
		// PyTorch default init: every value within ±1/√fanIn, and roughly filling it.
		fanIn := 1
		if strings.HasSuffix(a[i].Name, ".weight") {
			for _, d := range shapes[i][:len(shapes[i])-1] {
				fanIn *= d
			}
		} else {
			w := shapes[i-1]
			for _, d := range w[:len(w)-1] {
				fanIn *= d
			}
		}
		bound := 1 / math.Sqrt(float64(fanIn))
		maxAbs := 0.0
		for _, v := range a[i].Data {
			maxAbs = max(maxAbs, math.Abs(float64(v)))
		}
		if maxAbs > bound || (len(a[i].Data) >= 32 && maxAbs < 0.8*bound) {
			t.Errorf("%s: max |value| %v, want within (0.8, 1]·%v", a[i].Name, maxAbs, bound)
		}
	}
}
