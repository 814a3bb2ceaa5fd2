package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// A Digest is the SHA-256 hash of a byte string. It names a blob or chunk in
// the content store and, when computed by the caller over a canonical
// description of work, keys an entry in the action cache.
//
// The zero Digest is not the hash of anything a caller is expected to store;
// IsZero reports it.
type Digest [sha256.Size]byte

// Sum returns the SHA-256 digest of b.
func Sum(b []byte) Digest { return sha256.Sum256(b) }

// String returns d as 64 lower-case hexadecimal digits, the form ParseDigest
// accepts.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Short returns the first 12 hexadecimal digits of d, for log messages.
func (d Digest) Short() string { return d.String()[:12] }

// IsZero reports whether d is the zero Digest.
func (d Digest) IsZero() bool { return d == Digest{} }

// MarshalText implements encoding.TextMarshaler using String's form.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts exactly what
// ParseDigest accepts.
func (d *Digest) UnmarshalText(b []byte) error {
	p, err := ParseDigest(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// ParseDigest parses 64 hexadecimal digits (either case) into a Digest.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if len(s) != 2*len(d) {
		return Digest{}, fmt.Errorf("artifacts: invalid digest %q: want %d hex digits, have %d", s, 2*len(d), len(s))
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return Digest{}, fmt.Errorf("artifacts: invalid digest %q: %v", s, err)
	}
	return d, nil
}
