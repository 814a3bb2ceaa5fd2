package artifacts

import (
	"bytes"
	"fmt"
	"testing"
)

func TestChunkerBounds(t *testing.T) {
	data := randBytes(20, 32<<20)
	cs := chunks(data)
	total := 0
	for i, c := range cs {
		total += len(c)
		if len(c) > MaxChunkSize || (len(c) <= MinChunkSize && i != len(cs)-1) {
			t.Fatalf("chunk %d has %d bytes, outside (%d, %d]", i, len(c), MinChunkSize, MaxChunkSize)
		}
	}
	if total != len(data) || !bytes.Equal(bytes.Join(cs, nil), data) {
		t.Fatal("chunks do not reassemble the input")
	}
	mean := len(data) / len(cs)
	if mean < AvgChunkSize*3/4 || mean > AvgChunkSize*5/4 {
		t.Fatalf("mean chunk size %d, want within 25%% of %d", mean, AvgChunkSize)
	}
	t.Logf("%d chunks, mean %d bytes", len(cs), mean)
	if got := chunks(nil); len(got) != 0 {
		t.Fatalf("chunks(nil) = %d chunks", len(got))
	}
}

// TestChunkerGolden pins the chunking scheme: if it fails, new blobs will no
// longer share chunks with blobs already stored by earlier versions.
func TestChunkerGolden(t *testing.T) {
	var sizes []int
	for _, c := range chunks(randBytes(42, 2<<20)) {
		sizes = append(sizes, len(c))
	}
	want := []int{131512, 253815, 160691, 173662, 149288, 133660, 137741, 152548, 99177, 55940, 134138, 139461, 265981, 109538}
	if fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Fatalf("chunk sizes changed:\n got %v\nwant %v", sizes, want)
	}
}

func TestCDCStability(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
	}{
		{"insert-front", func(b []byte) []byte { return append(randBytes(31, 100), b...) }},
		{"delete-front", func(b []byte) []byte { return b[777:] }},
		{"insert-middle", func(b []byte) []byte {
			m := len(b) / 2
			return append(append(append([]byte{}, b[:m]...), randBytes(32, 5000)...), b[m:]...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := randBytes(30, 16<<20)
			before := map[Digest]bool{}
			for _, c := range chunks(orig) {
				before[Sum(c)] = true
			}
			after := chunks(tc.edit(orig))
			changed := 0
			for _, c := range after {
				if !before[Sum(c)] {
					changed++
				}
			}
			// One edit should disturb the chunk it lands in and perhaps the next.
			if changed > 3 {
				t.Fatalf("%d of %d chunks changed after one edit", changed, len(after))
			}
		})
	}
}
