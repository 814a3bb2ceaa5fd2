package train

import (
	"context"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// TestStateDigestByHand: the digest of a small state is the SHA-256 of the byte layout
// StateDigest documents, written out by hand. With u64(n) the 8 little-endian bytes of n
// and f(x) the 4 little-endian bytes of float32 x:
//
//	"global\0" u64(0) 01 u64(1)                       global, present, one tensor
//	  u64(1) "w" u64(1) u64(2) u64(2) f(1) f(-2)      name, rank, dims, length, values
//	"personal\0" u64(0) 00                            client 0: no personal model
//	"personal\0" u64(1) 01 u64(1)
//	  u64(1) "w" u64(1) u64(2) u64(2) f(0.5) f(0)
//
// Python's hashlib gives 2341636e…3028 for those bytes:
//
//	u=lambda n: struct.pack('<Q',n); f=lambda *v: b''.join(struct.pack('<f',x) for x in v)
//	b=b'global\0'+u(0)+b'\1'+u(1)+u(1)+b'w'+u(1)+u(2)+u(2)+f(1,-2)
//	b+=b'personal\0'+u(0)+b'\0'
//	b+=b'personal\0'+u(1)+b'\1'+u(1)+u(1)+b'w'+u(1)+u(2)+u(2)+f(0.5,0)
//	hashlib.sha256(b).hexdigest()
func TestStateDigestByHand(t *testing.T) {
	st := &State{
		Global:   tensor.List{{Name: "w", Shape: []int{2}, Data: []float32{1, -2}}},
		Personal: []tensor.List{nil, {{Name: "w", Shape: []int{2}, Data: []float32{0.5, 0}}}},
	}
	f := Fingerprint{Digest: StateDigest(st)}
	const want = "2341636e2c08a4b55b509902df399fb035ffce5274e0e8ad27c6f9db99ee3028"
	if f.Hex() != want {
		t.Fatalf("StateDigest = %s, want %s", f.Hex(), want)
	}
	// Every change to what a round hands on changes the digest: one value's sign (0 → -0),
	// a personal model present or not, a tensor's name.
	for name, change := range map[string]func(s *State){
		"-0":      func(s *State) { s.Personal[1][0].Data[1] = float32(negZero()) },
		"absent":  func(s *State) { s.Personal[1] = nil },
		"present": func(s *State) { s.Personal[0] = tensor.List{} },
		"name":    func(s *State) { s.Global[0].Name = "v" },
		"mask":    func(s *State) { s.Masks = []tensor.List{nil} },
	} {
		c := &State{Global: st.Global.Clone(), Personal: []tensor.List{nil, st.Personal[1].Clone()}}
		change(c)
		if got := (Fingerprint{Digest: StateDigest(c)}).Hex(); got == want {
			t.Errorf("change %q left the digest unchanged", name)
		}
	}
}

// TestStateDigestPortable: the byte-by-byte path (big-endian machines) hashes the same
// bytes as hashing the values' memory in place, over more than one conversion chunk.
func TestStateDigestPortable(t *testing.T) {
	w := tensor.New("w", 3, hashChunk)
	for i := range w.Data {
		w.Data[i] = float32(i%97) - 0.25
	}
	st := &State{Global: tensor.List{w}, Personal: []tensor.List{nil, {w}}}
	fast := StateDigest(st)
	old := littleEndian
	littleEndian = false
	defer func() { littleEndian = old }()
	if slow := StateDigest(st); slow != fast {
		t.Errorf("chunked digest %x, in place %x", slow, fast)
	}
}

func negZero() float64 { z := 0.0; return -z }

func TestFingerprintsEncoding(t *testing.T) {
	fs := []Fingerprint{{Round: 1}, {Round: 2}}
	fs[1].Digest[0], fs[1].Digest[31] = 0xab, 0x01
	b := EncodeFingerprints(fs)
	want := "1\t" + zeros(64) + "\n2\tab" + zeros(60) + "01\n"
	if string(b) != want {
		t.Fatalf("encoded %q, want %q", b, want)
	}
	back, err := DecodeFingerprints(b)
	if err != nil || !reflect.DeepEqual(back, fs) {
		t.Fatalf("decoded %v (%v), want %v", back, err, fs)
	}
	for _, bad := range []string{"1 " + zeros(64) + "\n", "1\t" + zeros(63) + "\n", "2\t" + zeros(64) + "\n1\t" + zeros(64) + "\n", "x\t" + zeros(64)} {
		if _, err := DecodeFingerprints([]byte(bad)); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
	if back, err := DecodeFingerprints(nil); err != nil || back != nil {
		t.Errorf("no bytes: %v, %v", back, err)
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

// TestRunFingerprints: a run records one fingerprint per round, the last the digest of its
// final state; a run stopped after round 2 (StopAfter) records the same first two; a run
// resumed from any checkpoint records the same as the uninterrupted one (through the
// checkpoint's encoding, whose blobs include the fingerprints).
func TestRunFingerprints(t *testing.T) {
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"fedavg", "local"} {
		r, ds, a := tinyRun(method)
		var cps []map[string][]byte
		full, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend,
			Checkpoint: func(st *State) error {
				b, err := EncodeCheckpoint(st)
				cps = append(cps, b)
				return err
			}})
		if err != nil {
			t.Fatal(err)
		}
		fs := full.Fingerprints
		if len(fs) != r.Train.Rounds {
			t.Fatalf("%s: %d fingerprints for %d rounds", method, len(fs), r.Train.Rounds)
		}
		for i, f := range fs {
			if f.Round != i+1 {
				t.Errorf("%s: fingerprint %d is of round %d", method, i, f.Round)
			}
		}
		if fs[len(fs)-1].Digest != StateDigest(full) {
			t.Errorf("%s: the last fingerprint is not the final state's digest", method)
		}
		if method == "fedavg" && fs[0].Digest == fs[1].Digest {
			t.Errorf("fedavg's state did not change from round 1 to round 2")
		}
		short, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend, StopAfter: 2})
		if err != nil {
			t.Fatal(err)
		}
		if short.Round != 2 || !reflect.DeepEqual(short.Fingerprints, fs[:2]) {
			t.Errorf("%s stopped after round 2: round %d, fingerprints %v, want %v", method, short.Round, short.Fingerprints, fs[:2])
		}
		for i, b := range cps {
			st, err := DecodeState(b, a.Clients(), runMethod(t, r))
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Fingerprints) != i+1 {
				t.Fatalf("%s: checkpoint after round %d holds %d fingerprints", method, i+1, len(st.Fingerprints))
			}
			resumed, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend, Resume: st})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resumed.Fingerprints, fs) {
				t.Errorf("%s resumed after round %d: fingerprints %v, want %v", method, i+1, resumed.Fingerprints, fs)
			}
		}
	}
}

// TestStopAfterKeepsScheduleOfFullRun: methods whose rounds depend on the run's total
// (DM-PFL's phase schedule over T, FedSelect's growth schedule) stopped after round 2 of 4
// record the first two fingerprints of the full run: StopAfter leaves Train.Rounds as is.
func TestStopAfterKeepsScheduleOfFullRun(t *testing.T) {
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"dmpfl", "fedselect"} {
		r, ds, a := tinyRun(method)
		r.Params, r.Options = manifest.DefaultParams(method)
		if method == "dmpfl" {
			r.Params = map[string]float64{"sparsity": 0.5, "alpha_s": 0.1, "readjust_every": 1, "iterations": 1, "share_threshold": 0.3}
			r.Options = map[string]string{"base_entropy": "train"}
		}
		full, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend})
		if err != nil {
			t.Fatal(err)
		}
		short, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend, StopAfter: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(full.Fingerprints) != 4 || !reflect.DeepEqual(short.Fingerprints, full.Fingerprints[:2]) {
			t.Errorf("%s: stopped after round 2 %v, full %v", method, short.Fingerprints, full.Fingerprints)
		}
	}
}

// BenchmarkStateDigest hashes a state of one million float32 values (4 MB); bytes/s is
// the hashing rate (a 100-client FedOBP state of ~0.58M values each is ~232 MB).
func BenchmarkStateDigest(b *testing.B) {
	st := &State{Global: tensor.List{tensor.New("w", 1000, 1000)}}
	b.SetBytes(4 * 1000 * 1000)
	for b.Loop() {
		StateDigest(st)
	}
}
