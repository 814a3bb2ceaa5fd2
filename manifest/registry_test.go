package manifest

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

type baseParams struct {
	Rate float64 `param:"rate" default:"0.5" check:"unit"`
}

type registryTestParams struct {
	baseParams
	Steps int     `param:"steps" default:"3" check:"gt0"`
	Mu    float32 `param:"mu" default:"0.01"`
	On    bool    `param:"on" default:"1" check:"unit"`
	Mode  string  `param:"mode" choices:"a|b"`
	Names string  `param:"names"`
}

// The parameter struct's tags give the parameters in field order (embedded structs
// first), their defaults as a Run's key maps hold them, and MethodParams converts back as
// Go converts.
func TestRegistryParamStruct(t *testing.T) {
	RegisterMethod(MethodDef{Name: "registry_test", Params: func() any { return new(registryTestParams) }})
	d, ok := LookupMethod("registry_test")
	if !ok {
		t.Fatal("not registered")
	}
	if got, want := d.paramNames(), []string{"rate", "steps", "mu", "on", "mode", "names"}; !reflect.DeepEqual(got, want) {
		t.Errorf("parameters %v, want %v", got, want)
	}
	params, options := d.Defaults()
	if want := map[string]float64{"rate": 0.5, "steps": 3, "mu": 0.01, "on": 1}; !reflect.DeepEqual(params, want) {
		t.Errorf("numeric defaults %v, want %v", params, want)
	}
	if want := map[string]string{"mode": "a", "names": ""}; !reflect.DeepEqual(options, want) {
		t.Errorf("word defaults %v, want %v", options, want)
	}
	r := &Run{Method: "registry_test", Params: map[string]float64{"rate": 0.25, "steps": 2.7, "mu": 0.1, "on": 0.5},
		Options: map[string]string{"mode": "b", "names": "x,y"}}
	p, err := MethodParams(r)
	if err != nil {
		t.Fatal(err)
	}
	want := &registryTestParams{baseParams{0.25}, 2, float32(0.1), true, "b", "x,y"}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("MethodParams %+v, want %+v", p, want)
	}
}

func TestRegisterMethodRejects(t *testing.T) {
	type noTag struct{ X float64 }
	type badDefault struct {
		X float64 `param:"x" default:"one"`
	}
	type badType struct {
		X []int `param:"x"`
	}
	type wordDefault struct {
		X string `param:"x" default:"a"`
	}
	for name, d := range map[string]MethodDef{
		"no name":          {},
		"no tag":           {Name: "r1", Params: func() any { return new(noTag) }},
		"bad default":      {Name: "r2", Params: func() any { return new(badDefault) }},
		"bad type":         {Name: "r3", Params: func() any { return new(badType) }},
		"word default":     {Name: "r4", Params: func() any { return new(wordDefault) }},
		"not pointer":      {Name: "r5", Params: func() any { return noTag{} }},
		"twice":            {Name: "registry_twice"},
		"score not a word": {Name: "r6", Params: func() any { return new(registryTestParams) }, ScoreQuantile: ScoreQuantile{Score: "rate", Q: "mu"}},
		"quantile a word":  {Name: "r7", Params: func() any { return new(registryTestParams) }, ScoreQuantile: ScoreQuantile{Score: "mode", Q: "names"}},
		"no such quantile": {Name: "r8", Params: func() any { return new(registryTestParams) }, ScoreQuantile: ScoreQuantile{Score: "mode", Q: "qq"}},
		"score without q":  {Name: "r9", Params: func() any { return new(registryTestParams) }, ScoreQuantile: ScoreQuantile{Score: "mode"}},
	} {
		if name == "twice" {
			RegisterMethod(d)
		}
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "manifest.RegisterMethod") {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			RegisterMethod(d)
		}()
	}
}

// A method that declares its score and quantile parameters has them in its definition.
func TestScoreQuantileDeclared(t *testing.T) {
	RegisterMethod(MethodDef{Name: "registry_sq", Params: func() any { return new(registryTestParams) }, ScoreQuantile: ScoreQuantile{Score: "mode", Q: "rate"}})
	d, _ := LookupMethod("registry_sq")
	if sq := d.ScoreQuantile; !sq.Declared() || sq.Score != "mode" || sq.Q != "rate" {
		t.Errorf("ScoreQuantile %+v", sq)
	}
	if d, _ := LookupMethod("registry_test"); d.ScoreQuantile.Declared() {
		t.Error("a method without the declaration reads as declared")
	}
}

// TestTrainedBefore: the chance a sampled client trained in an earlier counted round,
// 1 − (1 − q)^k, averaged over the rounds counted; 1 with no rounds given.
func TestTrainedBefore(t *testing.T) {
	every := func(int) bool { return true }
	for _, tc := range []struct {
		of   CostOf
		want float64
	}{
		{CostOf{Participation: 0.1, From: 1, To: 1}, 0},
		{CostOf{Participation: 0.1, From: 2, To: 2}, 0.1},
		{CostOf{Participation: 0.1, From: 2, To: 3}, (0.1 + 0.19) / 2},
		{CostOf{Participation: 0.1, From: 1, To: 400}, 1 - (1-math.Pow(0.9, 400))/0.1/400},
		{CostOf{Participation: 1, From: 1, To: 4}, 0.75},
		{CostOf{}, 1},
	} {
		if got := tc.of.TrainedBefore(every); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%+v: %v, want %v", tc.of, got, tc.want)
		}
	}
	// Counting only round 4 (the official FedSelect's first growth with grow_every 3):
	// nobody before round 5; from round 5 on, those sampled in round 4.
	four := func(r int) bool { return r == 4 }
	if got := (CostOf{Participation: 0.5, From: 1, To: 6}).TrainedBefore(four); math.Abs(got-0.5*2/6) > 1e-12 {
		t.Errorf("growth in round 4 only: %v, want %v", got, 0.5*2/6)
	}
}
