package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// file builds a safetensors file by hand: header JSON, then the given float32 values.
func file(header string, values ...float32) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	for _, v := range values {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// TestDecodeHandWritten reads a file laid out as safetensors.torch.save_file writes it:
// metadata entry, tensors in any header order, data offsets relative to the data start.
func TestDecodeHandWritten(t *testing.T) {
	b := file(`{"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]},`+
		`"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 5, 6, 1, 2, 3, 4)
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := tensor.List{{Name: "b", Shape: []int{2}, Data: []float32{5, 6}}, {Name: "w", Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestRoundTrip(t *testing.T) {
	l := tensor.List{{Name: "conv1.weight", Shape: []int{1, 1, 2, 3}, Data: []float32{1, -2, 3.5, 4, 5, 6}},
		{Name: "bn1.running_var", Shape: []int{3}, Data: []float32{1, 1, float32(math.Pi)}}, {Name: "s", Shape: []int{}, Data: []float32{7}}}
	var buf bytes.Buffer
	if err := Encode(&buf, l); err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(buf.Bytes()); n%8 != 0 {
		t.Errorf("header length %d not 8-byte aligned", n)
	}
	got, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := tensor.List{l[1], l[0], l[2]} // sorted by name
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip: got %+v, want %+v", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		b    []byte
		want string
	}{
		{[]byte{1, 2}, "shorter"},
		{binary.LittleEndian.AppendUint64(nil, 1<<40), "does not fit"},
		{file(`[1,2]`), "not a JSON object"},
		{file(`{"w":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, 1, 2), "F32 only"},
		{file(`{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 1, 2), "data_offsets"},
		{file(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, 1, 2), "data_offsets"},
	}
	for _, tc := range cases {
		if _, err := Decode(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want it to mention %q", err, tc.want)
		}
	}
}
