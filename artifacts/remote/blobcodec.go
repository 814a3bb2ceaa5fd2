package remote

import (
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

// maxBlobDecoded bounds what one object may decompress to (a corrupt or hostile frame
// cannot claim more memory than this).
const maxBlobDecoded = 8 << 30

var (
	codecOnce sync.Once
	encoder   *zstd.Encoder
	decoder   *zstd.Decoder
	codecErr  error
)

func codec() error {
	codecOnce.Do(func() {
		encoder, codecErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
		if codecErr == nil {
			decoder, codecErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBlobDecoded))
		}
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
// is neither d's bytes nor a frame of them.
func DecodeBlob(obj []byte, d artifacts.Digest) ([]byte, bool) {
	if artifacts.Sum(obj) == d {
		return obj, true
	}
	if codec() != nil {
		return nil, false
	}
	data, err := decoder.DecodeAll(obj, nil)
	if err != nil || artifacts.Sum(data) != d {
		return nil, false
	}
	return data, true
}
