package data

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/fedpipe/fedpipe/manifest"
)

// MATLAB v5 data types (the "mi" codes of the MAT-file format).
const (
	miINT8       = 1
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miINT32      = 5
	miUINT32     = 6
	miSINGLE     = 7
	miDOUBLE     = 9
	miINT64      = 12
	miUINT64     = 13
	miMATRIX     = 14
	miCOMPRESSED = 15
)

var matTypeSize = map[uint32]int{miINT8: 1, miUINT8: 1, miINT16: 2, miUINT16: 2, miINT32: 4, miUINT32: 4,
	miSINGLE: 4, miDOUBLE: 8, miINT64: 8, miUINT64: 8}

// MatArray is a numeric variable read from a MAT v5 file: its dimensions (column-major,
// as MATLAB stores them) and its real part in the storage type the file used.
type MatArray struct {
	Dims []int
	// Type is the mi code of Data's elements (MATLAB may store a double array as uint8).
	Type uint32
	Data []byte
}

// Len is the number of elements.
func (a *MatArray) Len() int { return len(a.Data) / matTypeSize[a.Type] }

// At returns element i (column-major order) as a float64.
func (a *MatArray) At(i int) float64 {
	d := a.Data
	switch a.Type {
	case miINT8:
		return float64(int8(d[i]))
	case miUINT8:
		return float64(d[i])
	case miINT16:
		return float64(int16(binary.LittleEndian.Uint16(d[2*i:])))
	case miUINT16:
		return float64(binary.LittleEndian.Uint16(d[2*i:]))
	case miINT32:
		return float64(int32(binary.LittleEndian.Uint32(d[4*i:])))
	case miUINT32:
		return float64(binary.LittleEndian.Uint32(d[4*i:]))
	case miSINGLE:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(d[4*i:])))
	case miDOUBLE:
		return math.Float64frombits(binary.LittleEndian.Uint64(d[8*i:]))
	case miINT64:
		return float64(int64(binary.LittleEndian.Uint64(d[8*i:])))
	default:
		return float64(binary.LittleEndian.Uint64(d[8*i:]))
	}
}

// maxMATElement bounds one decompressed element (SVHN's train X is 225 MB).
const maxMATElement = 1 << 32

type matReader struct{ path string }

func (m matReader) errf(format string, a ...any) error {
	return &FormatError{m.path, "MATLAB v5 .mat file", fmt.Sprintf(format, a...)}
}

// element splits the next data element off b: its type, its data, and the rest of b.
func (m matReader) element(b []byte) (typ uint32, data, rest []byte, err error) {
	if len(b) < 8 {
		return 0, nil, nil, m.errf("truncated element tag (%d bytes left)", len(b))
	}
	first := binary.LittleEndian.Uint32(b)
	if first>>16 != 0 { // small data element: size and type packed in 4 bytes, data in the next 4
		typ, size := first&0xffff, int(first>>16)
		if size > 4 {
			return 0, nil, nil, m.errf("small element claims %d bytes (at most 4)", size)
		}
		return typ, b[4 : 4+size], b[8:], nil
	}
	typ, size := first, int(binary.LittleEndian.Uint32(b[4:]))
	if size > len(b)-8 {
		return 0, nil, nil, m.errf("element of type %d claims %d bytes, only %d left", typ, size, len(b)-8)
	}
	data, next := b[8:8+size], 8+size
	if typ != miCOMPRESSED {
		next = min(len(b), (next+7)&^7)
	}
	return typ, data, b[next:], nil
}

// ReadMAT parses a MATLAB v5 (level 5) little-endian MAT-file and returns its numeric
// variables by name. Compressed elements (miCOMPRESSED, zlib) are inflated; cell,
// struct, sparse and complex arrays are rejected.
func ReadMAT(path string, b []byte) (map[string]*MatArray, error) {
	m := matReader{path}
	if len(b) < 128 {
		return nil, m.errf("%d bytes, shorter than the 128-byte header", len(b))
	}
	if string(b[126:128]) != "IM" {
		if string(b[126:128]) == "MI" {
			return nil, m.errf("big-endian file; only little-endian MAT files are read")
		}
		return nil, m.errf("no MAT v5 endian indicator (a v7.3 HDF5 or v4 file? save with -v7)")
	}
	if v := binary.LittleEndian.Uint16(b[124:]); v != 0x0100 {
		if v == 0x0200 {
			return nil, m.errf("MATLAB v7.3 (HDF5) file; only v5 files (MATLAB's -v7 or -v6 option) are read")
		}
		return nil, m.errf("version 0x%04x, want 0x0100 (MAT v5)", v)
	}
	out := map[string]*MatArray{}
	rest := b[128:]
	for len(rest) > 0 {
		typ, data, r, err := m.element(rest)
		if err != nil {
			return nil, err
		}
		rest = r
		if typ == miCOMPRESSED {
			zr, err := zlib.NewReader(bytes.NewReader(data))
			if err != nil {
				return nil, m.errf("compressed element: %v", err)
			}
			inner, err := io.ReadAll(io.LimitReader(zr, maxMATElement+1))
			if err != nil {
				return nil, m.errf("compressed element: corrupt zlib data: %v", err)
			}
			if typ, data, _, err = m.element(inner); err != nil {
				return nil, err
			}
		}
		if typ != miMATRIX {
			continue
		}
		name, arr, err := m.matrix(data)
		if err != nil {
			return nil, err
		}
		if arr != nil {
			out[name] = arr
		}
	}
	return out, nil
}

// matrix decodes a miMATRIX element's body: array flags, dimensions, name, real part.
func (m matReader) matrix(b []byte) (string, *MatArray, error) {
	var parts [4][]byte
	var types [4]uint32
	for i := range parts {
		typ, data, rest, err := m.element(b)
		if err != nil {
			return "", nil, err
		}
		types[i], parts[i], b = typ, data, rest
		if i == 0 && len(data) == 8 {
			class := data[0]
			if class < 6 || class > 15 { // cell, struct, object, char, sparse: not numeric
				return "", nil, nil
			}
			if data[1]&0x08 != 0 {
				return "", nil, m.errf("complex arrays are not supported")
			}
		}
	}
	if types[0] != miUINT32 || len(parts[0]) != 8 {
		return "", nil, m.errf("matrix without array flags")
	}
	if types[1] != miINT32 || len(parts[1]) < 8 || len(parts[1])%4 != 0 {
		return "", nil, m.errf("matrix without a valid dimensions element")
	}
	arr := &MatArray{Type: types[3], Data: parts[3]}
	n := 1
	for i := 0; i < len(parts[1]); i += 4 {
		d := int(int32(binary.LittleEndian.Uint32(parts[1][i:])))
		if d < 0 {
			return "", nil, m.errf("negative dimension %d", d)
		}
		arr.Dims = append(arr.Dims, d)
		if n *= d; n > maxMATElement {
			return "", nil, m.errf("dimensions %v are too large", arr.Dims)
		}
	}
	name := string(parts[2])
	size, ok := matTypeSize[arr.Type]
	if !ok {
		return "", nil, m.errf("variable %s: data of type %d is not numeric", name, arr.Type)
	}
	if len(arr.Data) != n*size {
		return "", nil, m.errf("variable %s: dimensions %v need %d elements, the data hold %d", name, arr.Dims, n, len(arr.Data)/size)
	}
	return name, arr, nil
}

// LoadSVHN reads SVHN's cropped digits (train_32x32.mat then test_32x32.mat in dir; the
// optional extra_32x32.mat is not used, as in the seed papers). X is 32×32×3×N uint8 in
// MATLAB's column-major order; y holds 1–10, with 10 meaning the digit 0, mapped to 0.
func LoadSVHN(dir, mode string) (*Dataset, error) {
	g := newDigester()
	var pix []byte
	var y []int32
	trainN := 0
	for _, name := range []string{"train_32x32.mat", "test_32x32.mat"} {
		p := filepath.Join(dir, name)
		if !isFile(p) {
			return nil, &MissingDataError{Dataset: "svhn", Searched: []string{dir}, Missing: name, Install: installHelp("svhn")}
		}
		raw, err := g.read(p, name)
		if err != nil {
			return nil, err
		}
		vars, err := ReadMAT(p, raw)
		if err != nil {
			return nil, err
		}
		x, lab := vars["X"], vars["y"]
		if x == nil || lab == nil {
			return nil, &FormatError{p, "SVHN .mat file", "no X or y variable"}
		}
		if len(x.Dims) != 4 || x.Dims[0] != 32 || x.Dims[1] != 32 || x.Dims[2] != 3 || x.Type != miUINT8 {
			return nil, &FormatError{p, "SVHN .mat file", fmt.Sprintf("X has dimensions %v (type %d), want uint8 32×32×3×N", x.Dims, x.Type)}
		}
		n := x.Dims[3]
		if lab.Len() != n {
			return nil, &FormatError{p, "SVHN .mat file", fmt.Sprintf("y holds %d labels for %d images", lab.Len(), n)}
		}
		for i := 0; i < n; i++ {
			l := int(lab.At(i))
			if l < 1 || l > 10 {
				return nil, &FormatError{p, "SVHN .mat file", fmt.Sprintf("y[%d] = %v, want 1..10", i, lab.At(i))}
			}
			y = append(y, int32(l%10))
		}
		base := len(pix)
		pix = append(pix, make([]byte, n*cifarPixels)...)
		for s := 0; s < n; s++ {
			for ch := 0; ch < 3; ch++ {
				for c := 0; c < 32; c++ {
					src := x.Data[s*3072+ch*1024+c*32 : s*3072+ch*1024+c*32+32]
					for r, v := range src {
						pix[base+s*3072+(r*32+c)*3+ch] = v
					}
				}
			}
		}
		if trainN == 0 {
			trainN = n
		}
	}
	d := byteImageDataset("svhn", []int{32, 32, 3}, 10, pix, y, trainN, mode, &SVHNStats)
	d.Digest, d.Source = g.sum(), dir
	return d, nil
}

func loadSVHN(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
	return LoadSVHN(dir, spec.Normalize)
}
