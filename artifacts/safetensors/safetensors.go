// Package safetensors reads and writes float32 tensors in the safetensors format
// (https://github.com/huggingface/safetensors), which PyTorch users write with
// safetensors.torch.save_file: an 8-byte little-endian header length N, N bytes of JSON
// mapping each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
// into the data that follows the header; an optional "__metadata__" entry of strings),
// then the raw little-endian values, row-major. fedpipe reads F32 tensors only; the
// converter casts with .float().
package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// maxHeader bounds the JSON header (the reference implementation's limit is 100 MB).
const maxHeader = 100 << 20

// entry is one tensor's header record.
type entry struct {
	DType       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// ReadFile reads every tensor of the file at path, sorted by name.
func ReadFile(path string) (tensor.List, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// Decode parses a safetensors file held in b, returning its tensors sorted by name.
func Decode(b []byte) (tensor.List, error) {
	if len(b) < 8 {
		return nil, errors.New("not a safetensors file: shorter than its 8-byte header length")
	}
	n := binary.LittleEndian.Uint64(b[:8])
	if n > maxHeader || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("not a safetensors file: header length %d does not fit the %d-byte file", n, len(b))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &raw); err != nil {
		return nil, fmt.Errorf("not a safetensors file: header is not a JSON object: %v", err)
	}
	data := b[8+n:]
	var out tensor.List
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var e entry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("tensor %q: bad header entry: %v", name, err)
		}
		if e.DType != "F32" {
			return nil, fmt.Errorf("tensor %q has dtype %s; fedpipe reads F32 only (convert with tensor.float())", name, e.DType)
		}
		size := 1
		for _, d := range e.Shape {
			if d < 0 {
				return nil, fmt.Errorf("tensor %q: negative dimension in shape %v", name, e.Shape)
			}
			size *= d
		}
		begin, end := e.DataOffsets[0], e.DataOffsets[1]
		if begin < 0 || end < begin || end > int64(len(data)) || end-begin != 4*int64(size) {
			return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] do not hold shape %v as F32 within the %d data bytes",
				name, begin, end, e.Shape, len(data))
		}
		t := tensor.Tensor{Name: name, Shape: append([]int{}, e.Shape...), Data: make([]float32, size)}
		for i := range t.Data {
			t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[begin+4*int64(i):]))
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Encode writes l as a safetensors file (F32, tensors laid out in the order given).
func Encode(w io.Writer, l tensor.List) error {
	header := map[string]entry{}
	var off int64
	for _, t := range l {
		if err := t.Check(); err != nil {
			return err
		}
		if _, dup := header[t.Name]; dup || t.Name == "__metadata__" {
			return fmt.Errorf("tensor name %q repeated or reserved", t.Name)
		}
		header[t.Name] = entry{DType: "F32", Shape: append([]int{}, t.Shape...), DataOffsets: [2]int64{off, off + 4*int64(len(t.Data))}}
		off += 4 * int64(len(t.Data))
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 { // the format pads the header with spaces to 8-byte alignment
		h = append(h, ' ')
	}
	buf := make([]byte, 8, 8+len(h)+int(off))
	binary.LittleEndian.PutUint64(buf, uint64(len(h)))
	buf = append(buf, h...)
	for _, t := range l {
		for _, v := range t.Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	_, err = w.Write(buf)
	return err
}
