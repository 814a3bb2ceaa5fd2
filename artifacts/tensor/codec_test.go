package tensor

import (
	"bytes"
	"encoding/hex"
	"math"
	"reflect"
	"strings"
	"testing"
)

func sample() Bundle {
	w := New("layer1/w", 2, 3)
	for i := range w.Data {
		w.Data[i] = float32(i) - 2.5
	}
	m := NewMask("layer1/w", 2, 3)
	m.Set(1, true)
	m.Set(5, true)
	return Bundle{
		Tensors: List{w, {Name: "scalar", Data: []float32{7}}, New("empty", 0, 4)},
		Masks:   []Mask{m, NewMask("big", 9)},
	}
}

// normalize maps the representations Decode cannot distinguish to one.
func normalize(b Bundle) Bundle {
	b = Bundle{Tensors: b.Tensors.Clone(), Masks: append([]Mask(nil), b.Masks...)}
	for i := range b.Tensors {
		if len(b.Tensors[i].Shape) == 0 {
			b.Tensors[i].Shape = nil
		}
		if b.Tensors[i].Data == nil {
			b.Tensors[i].Data = []float32{}
		}
	}
	for i, m := range b.Masks {
		m = m.Clone()
		if len(m.Shape) == 0 {
			m.Shape = nil
		}
		if m.Bits == nil {
			m.Bits = []byte{}
		}
		b.Masks[i] = m
	}
	if len(b.Masks) == 0 {
		b.Masks = nil
	}
	if len(b.Tensors) == 0 {
		b.Tensors = nil
	}
	return b
}

func TestBundleRoundTrip(t *testing.T) {
	big := New("big", 1000, 1000)
	for i := range big.Data {
		big.Data[i] = float32(i) * 1e-3
	}
	special := Tensor{Name: "special", Shape: []int{5}, Data: []float32{
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)),
		math.Float32frombits(0x7fc00001), // NaN with a payload
		math.SmallestNonzeroFloat32,
	}}
	for _, tc := range []struct {
		name string
		b    Bundle
	}{
		{"empty", Bundle{}},
		{"sample", sample()},
		{"masks-only", Bundle{Masks: []Mask{NewMask("m", 3, 3)}}},
		{"unicode-name", Bundle{Tensors: List{New("wëight/κ", 1)}}},
		{"special-values", Bundle{Tensors: List{special}}},
		{"big", Bundle{Tensors: List{big}}},
		{"rank-max", Bundle{Tensors: List{New("r", 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := EncodeBundle(tc.b)
			if !bytes.Equal(enc, EncodeBundle(normalize(tc.b))) {
				t.Fatal("encoding is not deterministic")
			}
			got, err := DecodeBundle(enc)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name != "special-values" && !reflect.DeepEqual(normalize(got), normalize(tc.b)) { // NaN != NaN; bits checked below
				t.Fatalf("round trip changed the bundle:\n got %+v\nwant %+v", got, tc.b)
			}
			// Bit-exact floats (reflect.DeepEqual treats NaN != NaN).
			for i, tt := range got.Tensors {
				for j, v := range tt.Data {
					if math.Float32bits(v) != math.Float32bits(tc.b.Tensors[i].Data[j]) {
						t.Fatalf("%s[%d]: bits %08x, want %08x", tt.Name, j, math.Float32bits(v), math.Float32bits(tc.b.Tensors[i].Data[j]))
					}
				}
			}
			if len(tc.b.Masks) == 0 {
				l, err := Decode(Encode(tc.b.Tensors))
				if err != nil || !bytes.Equal(Encode(l), enc) {
					t.Fatalf("Decode(Encode(l)): %v", err)
				}
			}
		})
	}
}

// TestGolden pins the documented format.
func TestGolden(t *testing.T) {
	m := NewMask("m", 3)
	m.Set(0, true)
	m.Set(2, true)
	got := EncodeBundle(Bundle{Tensors: List{{Name: "w", Shape: []int{2}, Data: []float32{1, -2}}}, Masks: []Mask{m}})
	want := "46505442" + "0100" + "02000000" + // "FPTB", version 1, 2 entries
		"01" + "01000000" + "77" + "01" + "02000000" + "0000803f" + "000000c0" + // tensor "w" [2] {1, -2}
		"02" + "01000000" + "6d" + "01" + "03000000" + "05" // mask "m" [3] {1,0,1}
	if hex.EncodeToString(got) != want {
		t.Fatalf("encoding\n got %x\nwant %s", got, want)
	}
}

func TestDecodeRejects(t *testing.T) {
	valid := EncodeBundle(sample())
	tensorOnly := Encode(List{New("w", 2)})
	mod := func(b []byte, f func([]byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"nil", nil, "magic"},
		{"bad-magic", mod(valid, func(b []byte) []byte { b[0] = 'X'; return b }), "magic"},
		{"bad-version", mod(valid, func(b []byte) []byte { b[4] = 2; return b }), "version"},
		{"trailing", append(append([]byte(nil), valid...), 0), "trailing"},
		{"count-too-big", mod(valid, func(b []byte) []byte { b[6] = 0xff; b[7] = 0xff; return b }), "entries"},
		{"count-too-small", mod(tensorOnly, func(b []byte) []byte { b[6] = 0; return b }), "trailing"},
		{"unknown-kind", mod(tensorOnly, func(b []byte) []byte { b[10] = 9; return b }), "kind"},
		{"rank-too-big", mod(tensorOnly, func(b []byte) []byte { b[16] = MaxRank + 1; return b }), "rank"},
		{"huge-dim", mod(tensorOnly, func(b []byte) []byte { copy(b[17:], []byte{0xff, 0xff, 0xff, 0x7f}); return b }), "needs"},
		{"dim-over-int32", mod(tensorOnly, func(b []byte) []byte { copy(b[17:], []byte{0xff, 0xff, 0xff, 0xff}); return b }), "too large"},
		{"name-too-long", mod(tensorOnly, func(b []byte) []byte { b[14] = 0x7f; return b }), "truncated"},
		{"padding-bits", mod(EncodeBundle(Bundle{Masks: []Mask{NewMask("m", 3)}}), func(b []byte) []byte { b[len(b)-1] = 0x08; return b }), "padding"},
		{"masks-in-Decode", valid, "DecodeBundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	// Every proper prefix of a valid encoding is rejected.
	for n := range len(valid) {
		if _, err := DecodeBundle(valid[:n]); err == nil {
			t.Fatalf("prefix of %d/%d bytes decoded", n, len(valid))
		}
	}
	// A tensor entry after a mask entry is rejected (the encoding is canonical).
	a := EncodeBundle(Bundle{Masks: []Mask{NewMask("m", 1)}})
	b := Encode(List{New("w", 1)})
	swapped := append(append([]byte(nil), a[:6]...), 2, 0, 0, 0)
	swapped = append(append(swapped, a[headerSize:]...), b[headerSize:]...)
	if _, err := DecodeBundle(swapped); err == nil || !strings.Contains(err.Error(), "after a mask") {
		t.Fatalf("tensor after mask: %v", err)
	}
}

func TestEncodePanicsOnInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    Bundle
	}{
		{"short-data", Bundle{Tensors: List{{Name: "w", Shape: []int{3}, Data: []float32{1}}}}},
		{"negative-dim", Bundle{Tensors: List{{Name: "w", Shape: []int{-1, -1}, Data: []float32{1}}}}},
		{"rank", Bundle{Tensors: List{New("w", make([]int, MaxRank+1)...)}}},
		{"mask-bits", Bundle{Masks: []Mask{{Name: "m", Shape: []int{9}, Bits: []byte{0}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("EncodeBundle did not panic")
				}
			}()
			EncodeBundle(tc.b)
		})
	}
}

func TestMask(t *testing.T) {
	m := NewMask("m", 3, 4)
	if len(m.Bits) != 2 || m.Len() != 12 || m.Count() != 0 {
		t.Fatalf("NewMask: %+v", m)
	}
	for _, i := range []int{0, 7, 8, 11} {
		m.Set(i, true)
	}
	m.Set(7, false)
	if m.Count() != 3 || !m.Get(0) || m.Get(7) || !m.Get(8) || !m.Get(11) {
		t.Fatalf("Set/Get: bits %08b", m.Bits)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	tt := m.Tensor()
	want := []float32{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1}
	if !reflect.DeepEqual(tt.Data, want) {
		t.Fatalf("Tensor() = %v", tt.Data)
	}
	if back := MaskOf(tt); !reflect.DeepEqual(back, m) {
		t.Fatalf("MaskOf(Tensor()) = %+v, want %+v", back, m)
	}
	c := m.Clone()
	c.Set(1, true)
	if m.Get(1) {
		t.Fatal("Clone shares bits")
	}
	bad := NewMask("m", 12)
	bad.Bits[1] = 0x10
	if err := bad.Check(); err == nil {
		t.Fatal("Check accepted set padding bits")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Get out of range did not panic")
		}
	}()
	m.Get(12)
}

func FuzzDecode(f *testing.F) {
	f.Add(EncodeBundle(sample()))
	f.Add(Encode(List{New("w", 2, 2)}))
	f.Add(EncodeBundle(Bundle{}))
	f.Add([]byte("FPTB\x01\x00\x01\x00\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		bu, err := DecodeBundle(b)
		if err != nil {
			return
		}
		if err := bu.Check(); err != nil {
			t.Fatalf("decoded bundle fails Check: %v", err)
		}
		// Canonical: whatever decodes re-encodes to the same bytes.
		if re := EncodeBundle(bu); !bytes.Equal(re, b) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", b, re)
		}
	})
}
