package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// A Fingerprint is the SHA-256 digest of a run's state after one round (StateDigest).
type Fingerprint struct {
	Round  int
	Digest [sha256.Size]byte
}

// Hex is the digest in hexadecimal.
func (f Fingerprint) Hex() string { return hex.EncodeToString(f.Digest[:]) }

// StateDigest hashes everything a round hands to the next of the state's models: the
// global model, then each client's personal model, then each client's mask, then every
// method slot and the clients' BatchNorm tensors (State.slots, in their order). Each
// tensor list is preceded by its part's name and index and a presence byte (a nil list is
// hashed as absent, so a missing personal model differs from an empty one); each tensor
// by its name, rank and dimensions; its values are hashed as the little-endian bytes of
// their float32 bits, so -0 and 0, or two NaN payloads, differ. The per-round tables
// (metrics, communication, work, selection) are not hashed: they describe the state,
// they do not carry it.
//
// It streams the bytes through one hash with a fixed buffer, one tensor at a time, so a
// 100-client run's personal models are hashed without another copy of them.
func StateDigest(st *State) [sha256.Size]byte {
	h := sha256.New()
	var buf []byte
	list := func(part string, i int, l tensor.List) {
		buf = buf[:0]
		buf = append(buf, part...)
		buf = append(buf, 0)
		buf = binary.LittleEndian.AppendUint64(buf, uint64(i))
		if l == nil {
			buf = append(buf, 0)
			h.Write(buf)
			return
		}
		buf = append(buf, 1)
		buf = binary.LittleEndian.AppendUint64(buf, uint64(len(l)))
		h.Write(buf)
		for _, t := range l {
			buf = hashTensor(h, buf[:0], t)
		}
	}
	walkState(st, list)
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// littleEndian says whether this machine stores a float32 as its little-endian bytes.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// hashChunk is how many values hashTensor converts to bytes at a time.
const hashChunk = 8192

// hashTensor writes t's name, shape and values to h, using buf (returned, possibly grown)
// for the conversion.
func hashTensor(h hash.Hash, buf []byte, t tensor.Tensor) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(t.Name)))
	buf = append(buf, t.Name...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(t.Shape)))
	for _, d := range t.Shape {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(d))
	}
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(t.Data)))
	h.Write(buf)
	if littleEndian && len(t.Data) > 0 {
		// The values' memory is already their little-endian bytes: hash it in place.
		h.Write(unsafe.Slice((*byte)(unsafe.Pointer(&t.Data[0])), 4*len(t.Data)))
		return buf
	}
	for start := 0; start < len(t.Data); start += hashChunk {
		buf = buf[:0]
		for _, v := range t.Data[start:min(start+hashChunk, len(t.Data))] {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		h.Write(buf)
	}
	return buf
}

// recordFingerprint appends the digest of st after its round st.Round.
func recordFingerprint(st *State) {
	st.Fingerprints = append(st.Fingerprints, Fingerprint{Round: st.Round, Digest: StateDigest(st)})
}

// EncodeFingerprints writes fingerprints one line each, "round<TAB>hex\n".
func EncodeFingerprints(fs []Fingerprint) []byte {
	var b bytes.Buffer
	for _, f := range fs {
		fmt.Fprintf(&b, "%d\t%s\n", f.Round, f.Hex())
	}
	return b.Bytes()
}

// DecodeFingerprints reverses EncodeFingerprints; rounds must increase from line to line.
func DecodeFingerprints(b []byte) ([]Fingerprint, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var out []Fingerprint
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		rs, hx, ok := strings.Cut(line, "\t")
		r, err := strconv.Atoi(rs)
		if !ok || err != nil {
			return nil, fmt.Errorf("fingerprints line %d: want round<TAB>hex, got %q", i+1, line)
		}
		var f Fingerprint
		if n, err := hex.Decode(f.Digest[:], []byte(hx)); err != nil || n != sha256.Size || len(hx) != 2*sha256.Size {
			return nil, fmt.Errorf("fingerprints line %d: %q is not a SHA-256 digest in hex", i+1, hx)
		}
		if len(out) > 0 && r <= out[len(out)-1].Round {
			return nil, fmt.Errorf("fingerprints line %d: round %d after round %d", i+1, r, out[len(out)-1].Round)
		}
		f.Round = r
		out = append(out, f)
	}
	return out, nil
}
