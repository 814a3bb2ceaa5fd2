package artifacts

// Content-defined chunking (FastCDC, Xia et al., USENIX ATC 2016).
//
// A blob larger than InlineMax is cut into chunks whose boundaries depend only
// on the bytes near them, not on their offsets: a rolling "gear" hash is
// updated one byte at a time and a boundary falls where the hash's top bits are
// all zero. Inserting or deleting bytes therefore moves at most the boundaries
// near the edit, and the chunks of an unchanged region (one client's model
// inside a larger checkpoint) keep their digests and are stored once.
//
// The gear table, the masks and the size limits below decide where boundaries
// fall. Changing any of them never makes a stored blob unreadable (a blob
// record lists its chunks explicitly), but it stops new blobs from sharing
// chunks with old ones. TestChunkerGolden pins them.

const (
	// MinChunkSize is the smallest chunk the chunker emits, except for the
	// final chunk of a blob.
	MinChunkSize = 32 << 10
	// AvgChunkSize is the target chunk size (the point where normalized
	// chunking relaxes its mask). The measured mean on random data is about
	// 150 KiB.
	AvgChunkSize = 128 << 10
	// MaxChunkSize is the largest chunk the chunker emits.
	MaxChunkSize = 1 << 20
	// InlineMax is the largest blob stored inline in its blob record rather
	// than in chunks.
	InlineMax = 64 << 10

	avgBits = 17 // log2(AvgChunkSize)
	// Normalized chunking (FastCDC "level 2"): before the average size a
	// boundary needs avgBits+2 zero bits, after it avgBits-2. The masks test
	// the hash's top bits, which depend on the last 64 bytes.
	maskS uint64 = (1<<(avgBits+2) - 1) << (64 - (avgBits + 2))
	maskL uint64 = (1<<(avgBits-2) - 1) << (64 - (avgBits - 2))
)

// gear is the rolling hash's byte table: 256 pseudo-random 64-bit values from
// SplitMix64 seeded with a fixed constant. It is part of the chunking scheme.
var gear = func() (t [256]uint64) {
	x := uint64(0x66656470697065) // "fedpipe"
	for i := range t {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		t[i] = z ^ (z >> 31)
	}
	return t
}()

// cutPoint returns the length of the first chunk of b: len(b) if
// len(b) <= MinChunkSize, otherwise a value in [MinChunkSize+1, MaxChunkSize].
func cutPoint(b []byte) int {
	n := len(b)
	if n <= MinChunkSize {
		return n
	}
	if n > MaxChunkSize {
		n = MaxChunkSize
	}
	normal := AvgChunkSize
	if normal > n {
		normal = n
	}
	var fp uint64
	i := MinChunkSize
	for ; i < normal; i++ {
		fp = (fp << 1) + gear[b[i]]
		if fp&maskS == 0 {
			return i + 1
		}
	}
	for ; i < n; i++ {
		fp = (fp << 1) + gear[b[i]]
		if fp&maskL == 0 {
			return i + 1
		}
	}
	return n
}

// chunks splits b into content-defined chunks. The chunks are subslices of b,
// in order, and cover it exactly; an empty b has no chunks.
func chunks(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := cutPoint(b)
		out = append(out, b[:n:n])
		b = b[n:]
	}
	return out
}
