package data

import (
	"bytes"
	"compress/gzip"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestIDXGzipStopsAtThePromisedSize: a gzipped IDX file whose stream decompresses to far
// more than its header promises (here 10 values followed by 64 MiB) is refused once the
// promised bytes and one more are read, not after decompressing all of it.
func TestIDXGzipStopsAtThePromisedSize(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(idx([]int{10}, make([]byte, 10))); err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(make([]byte, 64<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, _, err := ReadIDX("bomb.gz", raw)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "decompresses to more than the 10 values its header promises") {
		t.Errorf("error %v, want one saying the stream holds more than the header promises", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("allocated %d MiB reading a file that promises 10 bytes: the stream was read past the promise", alloc>>20)
	}
	if took > 2*time.Second {
		t.Errorf("took %v", took)
	}

	// The honest file still reads, gzipped or not.
	for _, b := range [][]byte{gz(idx([]int{2, 3}, []byte{1, 2, 3, 4, 5, 6})), idx([]int{2, 3}, []byte{1, 2, 3, 4, 5, 6})} {
		dims, vals, err := ReadIDX("ok", b)
		if err != nil || len(dims) != 2 || !bytes.Equal(vals, []byte{1, 2, 3, 4, 5, 6}) {
			t.Errorf("honest file: dims %v values %v err %v", dims, vals, err)
		}
	}
	// A stream shorter than its promise is still a truncated file.
	if _, _, err := ReadIDX("short.gz", gz(idx([]int{2, 3}, []byte{1, 2, 3}))[:]); err == nil || !strings.Contains(err.Error(), "6 values") {
		t.Errorf("short stream: %v", err)
	}
}
