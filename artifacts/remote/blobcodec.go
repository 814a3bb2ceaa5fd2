package remote

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/fedpipe/fedpipe/artifacts"
)

// A cas/<digest> object holds the blob's bytes, or a zstd frame of them when that is at
// least an eighth smaller (the tables verify, report and export read are uncompressed
// Arrow files that shrink tenfold or more; model tensors barely shrink and stay as they
// are). The name is always the SHA-256 of the blob itself, so a reader tells the two forms
// apart by that hash: bytes that hash to the name are the blob; anything else is
// decompressed and must then hash to it. Objects written before compression existed are
// read unchanged.
//
// Decoding is bounded by what the entry promised: an object whose entry records the blob's
// size is decompressed as a stream, hashed as it goes, and stopped at that size, so a frame
// that decodes to more (a decompression bomb: 4 GiB of zeros fit in a 145 KB frame) is
// refused after reading at most one byte past the size, in milliseconds and without the
// memory; a frame whose header declares another size is refused before decoding at all.

// maxBlobDecoded bounds what one object may decompress to when its entry records no size
// (entries pushed before sizes were recorded).
const maxBlobDecoded = 8 << 30

// minDecoderWindow is the least window a bounded decoder accepts (a frame of a small blob
// may still declare the encoder's usual window).
const minDecoderWindow = 8 << 20

var (
	codecOnce sync.Once
	encoder   *zstd.Encoder
	codecErr  error
)

func codec() error {
	codecOnce.Do(func() {
		encoder, codecErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	})
	return codecErr
}

// encodeBlob returns what PutBlob stores for data: a zstd frame when it is at least an
// eighth smaller, else data itself.
func encodeBlob(data []byte) []byte {
	if len(data) < 512 || codec() != nil {
		return data
	}
	z := encoder.EncodeAll(data, make([]byte, 0, len(data)/4))
	if len(z) > len(data)-len(data)/8 {
		return data
	}
	return z
}

// DecodeBlob returns the blob named d that a cas/ object obj holds (see encodeBlob), and false when obj
// is neither d's bytes nor a frame of them. It decodes at most maxBlobDecoded bytes.
func DecodeBlob(obj []byte, d artifacts.Digest) ([]byte, bool) {
	data, err := decodeObject(obj, d, -1)
	return data, err == nil
}

// decodeObject returns the blob named d that obj holds: obj itself when it hashes to d,
// else what obj decompresses to, streamed through SHA-256 and stopped at size bytes (size <
// 0: the blob's size is not recorded; then at maxBlobDecoded). The error says what is
// wrong with obj, for a message naming its file.
func decodeObject(obj []byte, d artifacts.Digest, size int64) ([]byte, error) {
	if (size < 0 || int64(len(obj)) == size) && artifacts.Sum(obj) == d {
		return obj, nil
	}
	limit := int64(maxBlobDecoded)
	if size >= 0 {
		limit = size
	}
	var h zstd.Header
	if err := h.Decode(obj); err != nil || h.Skippable {
		if size >= 0 && int64(len(obj)) != size {
			return nil, fmt.Errorf("its %d bytes are not the %d its entry records, and not a zstd frame of them", len(obj), size)
		}
		return nil, fmt.Errorf("its %d bytes neither hash to its name nor are a zstd frame", len(obj))
	}
	if h.HasFCS && size >= 0 && h.FrameContentSize != uint64(size) {
		return nil, fmt.Errorf("its zstd frame declares %d bytes, but its entry records %d", h.FrameContentSize, size)
	}
	window := max(limit, minDecoderWindow)
	dec, err := zstd.NewReader(bytes.NewReader(obj), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(uint64(window)), zstd.WithDecoderMaxWindow(uint64(min(window, zstd.MaxWindowSize))))
	if err != nil {
		return nil, fmt.Errorf("its zstd frame cannot be read: %v", err)
	}
	defer dec.Close()
	hash := sha256.New()
	buf := bytes.NewBuffer(make([]byte, 0, min(limit, 4*int64(len(obj))+64<<10)))
	n, err := io.Copy(io.MultiWriter(buf, hash), io.LimitReader(dec, limit+1))
	switch {
	case n > limit && size >= 0:
		return nil, fmt.Errorf("its zstd frame decompresses to more than the %d bytes its entry records (stopped there)", size)
	case n > limit:
		return nil, fmt.Errorf("its zstd frame decompresses to more than %d bytes (stopped there)", limit)
	case err != nil && !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("its %d bytes neither hash to its name nor decompress to bytes that do (the frame does not decode: %v)", len(obj), err)
	case size >= 0 && n != size:
		return nil, fmt.Errorf("its %d bytes neither hash to its name nor decompress to bytes that do (the frame decompresses to %d bytes, but its entry records %d)", len(obj), n, size)
	}
	var got artifacts.Digest
	copy(got[:], hash.Sum(nil))
	if got != d {
		return nil, fmt.Errorf("its %d bytes neither hash to its name nor decompress to bytes that do", len(obj))
	}
	return buf.Bytes(), nil
}
