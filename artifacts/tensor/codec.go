package tensor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Bundle format, version 1. All integers are little-endian.
//
//	header
//	  magic    [4]byte  "FPTB"
//	  version  uint16   1
//	  count    uint32   number of entries
//	entry (count times; every tensor entry precedes every mask entry)
//	  kind     uint8    1 = float32 tensor, 2 = mask
//	  namelen  uint32
//	  name     [namelen]byte
//	  rank     uint8    at most MaxRank
//	  dims     [rank]uint32, each at most math.MaxInt32
//	  payload  kind 1: Size(dims) float32 values (IEEE 754 bits, so NaN
//	                   payloads and -0 survive);
//	           kind 2: MaskBytes(Size(dims)) bytes of bits, as in Mask, with
//	                   zero padding bits.
//
// Nothing may follow the last entry. The encoding is canonical: a byte string
// that decodes without error re-encodes to itself, and equal bundles encode
// to equal bytes.
const (
	// Magic begins every encoded bundle.
	Magic = "FPTB"
	// Version is the format version Encode writes and Decode reads.
	Version = 1
	// MaxRank is the largest number of dimensions the format carries.
	MaxRank = 16

	kindFloat32 = 1
	kindMask    = 2
	headerSize  = len(Magic) + 2 + 4
)

// A Bundle is what the codec stores: float32 tensors and bit masks.
type Bundle struct {
	Tensors List
	Masks   []Mask
}

// Check reports the first tensor or mask in b that fails its Check.
func (b Bundle) Check() error {
	if err := b.Tensors.Check(); err != nil {
		return err
	}
	for _, m := range b.Masks {
		if err := m.Check(); err != nil {
			return err
		}
	}
	return nil
}

// Encode returns the encoding of a bundle holding just the tensors of l. It
// panics if l fails List.Check (a programming error: check first when l
// comes from outside).
func Encode(l List) []byte { return EncodeBundle(Bundle{Tensors: l}) }

// Decode decodes an encoding produced by Encode. It returns an error if b is
// not a valid bundle or if it holds masks (use DecodeBundle for those).
// Decode(Encode(l)) equals l, except that a rank-0 shape decodes as nil and
// Data is never nil.
func Decode(b []byte) (List, error) {
	bu, err := DecodeBundle(b)
	if err != nil {
		return nil, err
	}
	if len(bu.Masks) > 0 {
		return nil, fmt.Errorf("tensor: bundle holds %d masks; use DecodeBundle", len(bu.Masks))
	}
	return bu.Tensors, nil
}

// EncodeBundle returns the canonical encoding of b: its tensors in order,
// then its masks in order. It panics if b fails Bundle.Check, or if a name
// is longer than 4 GiB or a shape has more than MaxRank dimensions or a
// dimension above math.MaxInt32.
func EncodeBundle(b Bundle) []byte {
	if err := b.Check(); err != nil {
		panic("tensor: EncodeBundle: " + err.Error())
	}
	size := headerSize
	for _, t := range b.Tensors {
		size += entryHeaderSize(t.Name, t.Shape) + 4*len(t.Data)
	}
	for _, m := range b.Masks {
		size += entryHeaderSize(m.Name, m.Shape) + len(m.Bits)
	}
	n := len(b.Tensors) + len(b.Masks)
	if uint64(n) > math.MaxUint32 {
		panic("tensor: EncodeBundle: too many entries")
	}
	out := make([]byte, 0, size)
	out = append(out, Magic...)
	out = binary.LittleEndian.AppendUint16(out, Version)
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	for _, t := range b.Tensors {
		out = appendEntryHeader(out, kindFloat32, t.Name, t.Shape)
		for _, v := range t.Data {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
	}
	for _, m := range b.Masks {
		out = appendEntryHeader(out, kindMask, m.Name, m.Shape)
		out = append(out, m.Bits...)
	}
	return out
}

func entryHeaderSize(name string, shape []int) int {
	if uint64(len(name)) > math.MaxUint32 {
		panic(fmt.Sprintf("tensor: EncodeBundle: name of %d bytes is too long", len(name)))
	}
	if len(shape) > MaxRank {
		panic(fmt.Sprintf("tensor: EncodeBundle: %q has rank %d > %d", name, len(shape), MaxRank))
	}
	for _, d := range shape {
		if d > math.MaxInt32 {
			panic(fmt.Sprintf("tensor: EncodeBundle: %q has dimension %d > %d", name, d, math.MaxInt32))
		}
	}
	return 1 + 4 + len(name) + 1 + 4*len(shape)
}

func appendEntryHeader(out []byte, kind byte, name string, shape []int) []byte {
	out = append(out, kind)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(name)))
	out = append(out, name...)
	out = append(out, byte(len(shape)))
	for _, d := range shape {
		out = binary.LittleEndian.AppendUint32(out, uint32(d))
	}
	return out
}

// DecodeBundle decodes a bundle encoded by EncodeBundle (or Encode). It
// validates everything (magic, version, kinds and their order, lengths,
// shapes, padding bits, trailing bytes), never panics, and never allocates
// more than a small multiple of len(b), whatever b holds. Every decoded tensor
// and mask passes Check.
func DecodeBundle(b []byte) (Bundle, error) {
	d := decoder{b: b}
	if len(b) < headerSize || string(b[:len(Magic)]) != Magic {
		return Bundle{}, errors.New("tensor: not a tensor bundle (bad magic)")
	}
	d.b = b[len(Magic):]
	if v := d.u16(); v != Version {
		return Bundle{}, fmt.Errorf("tensor: bundle version %d, this fedpipe reads %d", v, Version)
	}
	count := d.u32()
	// Every entry takes at least 6 bytes, which bounds the slice capacity.
	if uint64(count) > uint64(len(d.b)/6) {
		return Bundle{}, fmt.Errorf("tensor: bundle claims %d entries in %d bytes", count, len(d.b))
	}
	var out Bundle
	for i := range count {
		kind := d.u8()
		name := string(d.bytes(int(d.u32())))
		rank := int(d.u8())
		if d.err != nil {
			return Bundle{}, fmt.Errorf("tensor: entry %d: truncated header", i)
		}
		if rank > MaxRank {
			return Bundle{}, fmt.Errorf("tensor: entry %d (%q): rank %d > %d", i, name, rank, MaxRank)
		}
		var shape []int
		zero := false
		for range rank {
			dim := d.u32()
			if dim > math.MaxInt32 {
				return Bundle{}, fmt.Errorf("tensor: entry %d (%q): dimension %d too large", i, name, dim)
			}
			zero = zero || dim == 0
			shape = append(shape, int(dim))
		}
		if d.err != nil {
			return Bundle{}, fmt.Errorf("tensor: entry %d (%q): truncated shape", i, name)
		}
		// Bound the element count by what the remaining bytes could hold
		// before multiplying, so garbage cannot overflow or over-allocate.
		limit := uint64(len(d.b)) * 8
		n := uint64(1)
		if zero {
			n = 0
		}
		for _, dim := range shape {
			if n == 0 {
				break
			}
			if uint64(dim) > limit/n {
				return Bundle{}, fmt.Errorf("tensor: entry %d (%q): shape %v needs more than the %d bytes left", i, name, shape, len(d.b))
			}
			n *= uint64(dim)
		}
		switch kind {
		case kindFloat32:
			if len(out.Masks) > 0 {
				return Bundle{}, fmt.Errorf("tensor: entry %d (%q): tensor after a mask", i, name)
			}
			if 4*n > uint64(len(d.b)) {
				return Bundle{}, fmt.Errorf("tensor: entry %d (%q): shape %v needs %d bytes of data, %d left", i, name, shape, 4*n, len(d.b))
			}
			raw := d.bytes(int(4 * n))
			data := make([]float32, n)
			for j := range data {
				data[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
			}
			out.Tensors = append(out.Tensors, Tensor{Name: name, Shape: shape, Data: data})
		case kindMask:
			if (n+7)/8 > uint64(len(d.b)) {
				return Bundle{}, fmt.Errorf("tensor: entry %d (%q): shape %v needs %d bytes of bits, %d left", i, name, shape, (n+7)/8, len(d.b))
			}
			raw := d.bytes(int((n + 7) / 8))
			m := Mask{Name: name, Shape: shape, Bits: append([]byte{}, raw...)}
			if err := m.Check(); err != nil {
				return Bundle{}, fmt.Errorf("tensor: entry %d: %v", i, err)
			}
			out.Masks = append(out.Masks, m)
		default:
			return Bundle{}, fmt.Errorf("tensor: entry %d (%q): unknown kind %d", i, name, kind)
		}
	}
	if len(d.b) != 0 {
		return Bundle{}, fmt.Errorf("tensor: %d trailing bytes after the last entry", len(d.b))
	}
	return out, nil
}

// decoder reads little-endian fields from b; after the first short read it
// sets err and returns zeros.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.err = errors.New("short")
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) u8() uint8 {
	p := d.bytes(1)
	if p == nil {
		return 0
	}
	return p[0]
}

func (d *decoder) u16() uint16 {
	p := d.bytes(2)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(p)
}

func (d *decoder) u32() uint32 {
	p := d.bytes(4)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}
