package train

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// The train stage's output (and checkpoint blob) results.OutTrainSketch holds the sketch
// of the state after round SketchRound (Sketch, JSON). It lets a result made on one backend
// be checked on another: the bits differ between backends, a fingerprint says only "equal
// or not", but a sketch can be compared within a tolerance. Outputs are not part of any
// key: a result made before sketches were kept simply has none.

// SketchRound is the round after which the train stage sketches its state.
const SketchRound = 1

// SketchProjections is how many fixed pseudo-random projections a sketch keeps per tensor.
const SketchProjections = 8

// sketchSeed seeds every tensor's projection signs (with the tensor's name and size), so
// that a sketch made anywhere, of the same state, gives the same numbers up to rounding.
const sketchSeed = 0x736b657463680001

// A Sketch summarizes a run's state after one round, tensor by tensor, in float64: each
// tensor's L2 norm and SketchProjections projections onto fixed pseudo-random ±1 vectors
// (Rademacher), the same on every machine. Two backends that compute the same round up to
// rounding give sketches within a small relative difference (CompareSketches); a state
// with one tensor scaled by 1.01 does not.
type Sketch struct {
	Round       int            `json:"round"`
	Projections int            `json:"projections"`
	Tensors     []TensorSketch `json:"tensors"`
}

// TensorSketch is one tensor's part of a Sketch.
type TensorSketch struct {
	// Part is the state's part holding the tensor ("global", "personal", "mask",
	// "aux/<slot>"), Index the client (or slot index) within it, Name the tensor's name.
	Part  string `json:"part"`
	Index int    `json:"index"`
	Name  string `json:"name"`
	Size  int    `json:"size"`
	// Norm is the L2 norm of the tensor's values; Proj its projections.
	Norm float64   `json:"norm"`
	Proj []float64 `json:"proj"`
}

// label names the tensor in a report: "personal[3] conv1/w".
func (t TensorSketch) label() string { return fmt.Sprintf("%s[%d] %s", t.Part, t.Index, t.Name) }

// walkState calls f for every tensor list a round hands to the next, in the order
// StateDigest hashes and SketchState sketches them: the global model, each client's personal model, each client's mask, then every
// method slot and the clients' BatchNorm tensors.
func walkState(st *State, f func(part string, i int, l tensor.List)) {
	f("global", 0, st.Global)
	for c, p := range st.Personal {
		f("personal", c, p)
	}
	for c, m := range st.Masks {
		f("mask", c, m)
	}
	for _, s := range st.slots() {
		for i := 0; i < s.Len; i++ {
			f("aux/"+s.Name, i, s.Get(i))
		}
	}
}

// SketchState sketches st (see Sketch), which is after round st.Round.
func SketchState(st *State) *Sketch {
	sk := &Sketch{Round: st.Round, Projections: SketchProjections}
	walkState(st, func(part string, i int, l tensor.List) {
		for _, t := range l {
			sk.Tensors = append(sk.Tensors, sketchTensor(part, i, t))
		}
	})
	return sk
}

// sketchTensor computes one tensor's norm and projections. The signs of element j's
// projections are the low SketchProjections bits of splitmix64(seed + j), seed drawn from
// sketchSeed, the tensor's name and its size; sums run in float64.
func sketchTensor(part string, i int, t tensor.Tensor) TensorSketch {
	h := fnv.New64a()
	h.Write([]byte(t.Name))
	seed := sketchSeed ^ h.Sum64() ^ uint64(len(t.Data))*0x9e3779b97f4a7c15
	var proj [SketchProjections]float64
	var sq float64
	for j, v := range t.Data {
		x := float64(v)
		sq += x * x
		// Bit k set adds x, clear subtracts it: the sign bit of x flipped where the bit is
		// clear, without a branch (the bits are random: a branch would mispredict half the time).
		xb, clear := math.Float64bits(x), ^splitmix64(seed+uint64(j))
		for k := range proj {
			proj[k] += math.Float64frombits(xb ^ (clear>>k&1)<<63)
		}
	}
	return TensorSketch{Part: part, Index: i, Name: t.Name, Size: len(t.Data), Norm: math.Sqrt(sq), Proj: proj[:]}
}

// splitmix64 is one step of the SplitMix64 generator's output function.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// EncodeSketch writes sk as JSON.
func EncodeSketch(sk *Sketch) ([]byte, error) { return json.Marshal(sk) }

// DecodeSketch reverses EncodeSketch.
func DecodeSketch(b []byte) (*Sketch, error) {
	var sk Sketch
	if err := json.Unmarshal(b, &sk); err != nil {
		return nil, fmt.Errorf("sketch: %w", err)
	}
	for _, t := range sk.Tensors {
		if len(t.Proj) != sk.Projections {
			return nil, fmt.Errorf("sketch: %s has %d projections, want %d", t.label(), len(t.Proj), sk.Projections)
		}
	}
	return &sk, nil
}

// SketchDiff is how far one sketch lies from another (CompareSketches).
type SketchDiff struct {
	// Tensors is how many tensors were compared.
	Tensors int `json:"tensors"`
	// Worst is the largest relative difference of one tensor's sketch, ‖a−b‖₂/‖b‖₂ over
	// the vector (norm, projections); WorstTensor names that tensor.
	Worst       float64 `json:"worst"`
	WorstTensor string  `json:"worst_tensor,omitempty"`
	// Mismatch says why the sketches cannot be compared (other rounds, other tensors);
	// empty when they can.
	Mismatch string `json:"mismatch,omitempty"`
}

// OK reports whether the sketches compare and no tensor's relative difference exceeds tol.
func (d SketchDiff) OK(tol float64) bool { return d.Mismatch == "" && d.Worst <= tol }

// CompareSketches compares sketch a (recomputed) with b (kept) tensor by tensor: for each,
// the relative difference ‖a−b‖₂/‖b‖₂ of the vector of its norm and projections (a tensor
// whose kept sketch is all zero must be all zero), and returns the largest. Sketches of
// other rounds, or of other tensors (names, sizes, order), do not compare.
func CompareSketches(a, b *Sketch) SketchDiff {
	var d SketchDiff
	switch {
	case a.Round != b.Round:
		d.Mismatch = fmt.Sprintf("round %d against round %d", a.Round, b.Round)
	case a.Projections != b.Projections:
		d.Mismatch = fmt.Sprintf("%d projections against %d", a.Projections, b.Projections)
	case len(a.Tensors) != len(b.Tensors):
		d.Mismatch = fmt.Sprintf("%d tensors against %d", len(a.Tensors), len(b.Tensors))
	}
	if d.Mismatch != "" {
		return d
	}
	for i, ta := range a.Tensors {
		tb := b.Tensors[i]
		if ta.Part != tb.Part || ta.Index != tb.Index || ta.Name != tb.Name || ta.Size != tb.Size ||
			len(ta.Proj) != len(tb.Proj) {
			d.Mismatch = fmt.Sprintf("tensor %d is %s (%d values) against %s (%d values)", i, ta.label(), ta.Size, tb.label(), tb.Size)
			return d
		}
		num := (ta.Norm - tb.Norm) * (ta.Norm - tb.Norm)
		den := tb.Norm * tb.Norm
		for k := range ta.Proj {
			num += (ta.Proj[k] - tb.Proj[k]) * (ta.Proj[k] - tb.Proj[k])
			den += tb.Proj[k] * tb.Proj[k]
		}
		rel := 0.0
		switch {
		case den > 0:
			rel = math.Sqrt(num / den)
		case num > 0:
			rel = math.Inf(1)
		}
		if math.IsNaN(rel) {
			rel = math.Inf(1)
		}
		d.Tensors++
		if rel > d.Worst || d.WorstTensor == "" {
			d.Worst, d.WorstTensor = rel, tb.label()
		}
	}
	return d
}
