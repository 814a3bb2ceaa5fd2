package data

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// NPY is an array read from a NumPy .npy file: its element type, shape and raw
// little-endian, C-order data.
type NPY struct {
	// Kind is the element type: "u1" (uint8), "i4", "i8", "f4" or "f8".
	Kind  string
	Shape []int
	Data  []byte
}

var npyItemSize = map[string]int{"u1": 1, "i4": 4, "i8": 8, "f4": 4, "f8": 8}

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([<>|=]?)([a-z][0-9]+)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// maxNPYBytes bounds one array (CIFAR-10-C's corruption files are 153.6 MB).
const maxNPYBytes = 1 << 32

// ReadNPY parses a .npy file (format version 1, 2 or 3) holding a little-endian,
// C-order array of uint8, int32, int64, float32 or float64. path names the file in errors.
func ReadNPY(path string, b []byte) (*NPY, error) {
	bad := func(format string, a ...any) error {
		return &FormatError{path, "NumPy .npy file", fmt.Sprintf(format, a...)}
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, bad("missing the \\x93NUMPY magic")
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, bad("truncated header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return nil, bad("format version %d.%d, want 1.0, 2.0 or 3.0", b[6], b[7])
	}
	if start+hlen > len(b) {
		return nil, bad("header of %d bytes runs past the end of the %d-byte file", hlen, len(b))
	}
	h := string(b[start : start+hlen])
	m := npyDescr.FindStringSubmatch(h)
	if m == nil {
		return nil, bad("header has no 'descr' entry: %q", strings.TrimSpace(h))
	}
	if m[1] == ">" {
		return nil, bad("big-endian data (%s%s); only little-endian is read", m[1], m[2])
	}
	a := &NPY{Kind: m[2]}
	size, ok := npyItemSize[a.Kind]
	if !ok {
		return nil, bad("element type %q, want uint8 (u1), int32 (i4), int64 (i8), float32 (f4) or float64 (f8)", m[1]+m[2])
	}
	if f := npyFortran.FindStringSubmatch(h); f == nil || f[1] != "False" {
		return nil, bad("array is not in C order (fortran_order must be False)")
	}
	sm := npyShape.FindStringSubmatch(h)
	if sm == nil {
		return nil, bad("header has no 'shape' entry")
	}
	n := 1
	for _, f := range strings.Split(sm[1], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 || d > 1<<31 {
			return nil, bad("shape entry %q", f)
		}
		a.Shape = append(a.Shape, d)
		n *= d
		if n*size > maxNPYBytes {
			return nil, bad("shape %v is too large", a.Shape)
		}
	}
	a.Data = b[start+hlen:]
	if len(a.Data) != n*size {
		return nil, bad("shape %v of %s needs %d data bytes, file holds %d", a.Shape, a.Kind, n*size, len(a.Data))
	}
	return a, nil
}

// Len is the number of elements.
func (a *NPY) Len() int { return len(a.Data) / npyItemSize[a.Kind] }

// Int returns element i as an integer (floats truncated).
func (a *NPY) Int(i int) int64 {
	switch a.Kind {
	case "u1":
		return int64(a.Data[i])
	case "i4":
		return int64(int32(binary.LittleEndian.Uint32(a.Data[4*i:])))
	case "i8":
		return int64(binary.LittleEndian.Uint64(a.Data[8*i:]))
	default:
		return int64(a.Float(i))
	}
}

// Float returns element i as a float64.
func (a *NPY) Float(i int) float64 {
	switch a.Kind {
	case "f4":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(a.Data[4*i:])))
	case "f8":
		return math.Float64frombits(binary.LittleEndian.Uint64(a.Data[8*i:]))
	default:
		return float64(a.Int(i))
	}
}

// maxNPZMember bounds one decompressed member of an .npz archive.
const maxNPZMember = 1 << 32

// ReadNPZ parses a NumPy .npz archive (a zip of .npy files, stored or deflated) and
// returns its arrays by name without the .npy suffix.
func ReadNPZ(path string, b []byte) (map[string]*NPY, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, &FormatError{path, "NumPy .npz archive", "not a zip file: " + err.Error()}
	}
	out := map[string]*NPY{}
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".npy") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, &FormatError{path, "NumPy .npz archive", fmt.Sprintf("member %s: %v", f.Name, err)}
		}
		raw, err := io.ReadAll(io.LimitReader(rc, maxNPZMember+1))
		rc.Close()
		if err != nil {
			return nil, &FormatError{path, "NumPy .npz archive", fmt.Sprintf("member %s: %v", f.Name, err)}
		}
		a, err := ReadNPY(path+"["+f.Name+"]", raw)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(f.Name, ".npy")] = a
	}
	return out, nil
}
