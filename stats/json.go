package stats

import (
	"encoding/json"
	"math"
)

// num is a float64 that encodes NaN and ±Inf (a value that cannot be computed) as JSON null,
// which encoding/json would otherwise refuse.
type num float64

func (v num) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// MarshalJSON writes the interval with null ends when it cannot be computed.
func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Lo num `json:"lo"`
		Hi num `json:"hi"`
	}{num(iv.Lo), num(iv.Hi)})
}

// MarshalJSON writes the summary with null for what cannot be computed (std of one value).
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		N    int      `json:"n"`
		Mean num      `json:"mean"`
		Std  num      `json:"std"`
		CI   Interval `json:"ci"`
	}{s.N, num(s.Mean), num(s.Std), s.CI})
}

// MarshalJSON writes the comparison with null for what cannot be computed.
func (p Paired) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Unit Unit     `json:"unit"`
		N    int      `json:"n"`
		Mean num      `json:"mean_diff"`
		CI   Interval `json:"ci"`
		P    num      `json:"p"`
		Test string   `json:"test"`
	}{p.Unit, p.N, num(p.Mean), p.CI, num(p.P), p.Test})
}
