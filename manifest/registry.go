package manifest

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// MethodDef declares a training method known to manifests. Each method registers its own
// (RegisterMethod), in the file that implements it (stages/train/methods): the manifest
// package validates against whatever is registered and knows no method by name.
type MethodDef struct {
	Name string
	// Display is the method's name as its paper writes it ("FedAvg", "LG-FedAvg"), for
	// legends and tables; never part of a key. DisplayName falls back to Name.
	Display string
	Doc     string
	// CostReference marks the method whose cost per client the cost table states the
	// others' as multiples of (FedAvg, as DM-PFL Table 4 does); one method sets it.
	CostReference bool
	// Personal is true when each client ends with its own model (evaluated on its own test
	// split); false when every client is evaluated with the one global model.
	Personal bool
	// Features is true when the method works on the model's penultimate features, which
	// the arch.Features models expose (all of them today).
	Features bool
	// NeedsGlobal is true when evaluating a client needs the run's global model beside the
	// client's own (DM-PFL+'s adaptive inference), so the train stage stores it and the
	// evaluate and shift stages read it.
	NeedsGlobal bool
	// Revision versions the method's own code: bump it when a change to this method alone
	// changes its outputs, so that only its cached results go stale (the train stage's
	// code version in pipeline/keys.go stales every method's). 0, the start, is not part
	// of the key, so adding the field changed no existing key.
	Revision int
	// BNRevision versions the method's code on models with BatchNorm alone
	// (ModelSpec.HasBatchNorm): bump it when a change alters the method's outputs only
	// where the model has BatchNorm, so that its results on other models stay current. It
	// enters the key of such a run's train stage only, and only above 0.
	BNRevision int
	// OptionRevisions versions the method's code for the runs with one value of one of
	// its word parameters alone, by "name=value" (e.g. "impl=paper"): bump an entry when
	// a change alters only such runs' outputs, so that the method's other runs stay
	// current. An entry enters the key of a matching run's train stage only, and only
	// above 0.
	OptionRevisions map[string]int
	// Extension declares, for a run's word options, whether and when a run of the method
	// may continue a cached shorter run (ExtendAlways, ExtendAtEvaluation, ExtendNever;
	// ExtensionIs for one answer whatever the options). Required: nil or
	// ExtensionUndeclared never extends, and the registry test fails on it.
	Extension func(options map[string]string) Extension
	// Params returns a new pointer to the method's parameter struct (nil: it takes none).
	// Every exported field is a parameter, described by its tags:
	//
	//	param:"name"        the manifest's key (required)
	//	default:"0.5"       a number's default (0 when absent)
	//	check:"unit,lt1"    the rules of the manifest's `check` tags (gt0, ge0, frac, unit, lt1)
	//	choices:"a|b|c"     a word parameter's allowed values; the default is the first
	//	doc:"..."           what it means, for the reader of the method's file
	//
	// A string field is a word (with choices, one of them; without, any text, default
	// empty); a float64, float32, int or bool field is a number, decoded and checked as a
	// float64 and converted as Go converts (int truncates, bool is "not 0"). Embedded
	// structs contribute their fields in order.
	Params func() any
	// Cost declares the work a round of the method implies beside FedAvg's on the same
	// setting (ImpliedCost), counted from what its algorithm must do: its extra forward and
	// backward passes, its Fisher or statistics pass, its selection step. `fedpipe bench
	// --methods` prints it beside the measured multiple, and the queue's plan projects a
	// cell's time from the measured one. nil: undeclared. Never part of a key.
	Cost func(CostOf) ImpliedCost
	// ScoreQuantile names, for a method that keeps personal the entries whose importance
	// score is above a quantile (FedOBP), its word parameter that picks the score and its
	// number parameter that sets the quantile; the report's accuracy-by-quantile figure
	// draws the methods that declare it. Zero: the method selects no entries that way.
	// RegisterMethod checks that both parameters exist with those kinds. Never part of a key.
	ScoreQuantile ScoreQuantile

	params []ParamDef
}

// ScoreQuantile names two of a method's parameters (MethodDef.ScoreQuantile): Score, a
// word parameter choosing the importance score, and Q, a number parameter giving the
// quantile of the scores above which entries stay personal.
type ScoreQuantile struct {
	Score, Q string
}

// Declared reports whether the method declares a score and a quantile.
func (s ScoreQuantile) Declared() bool { return s.Score != "" || s.Q != "" }

// CostOf is what a method's implied cost may depend on: the run's local epochs, its word
// options (an impl or variant choice) and its number parameters (FedRep's head epochs),
// each with the method's defaults where the run does not set it; and the rounds the cost
// is counted over with the fraction of clients a round samples, for a method whose
// client's work grows once it has trained before (FedSelect's LocalAlt).
type CostOf struct {
	Epochs  int
	Options map[string]string
	Params  map[string]float64
	// Participation is the fraction of clients a round samples (train.participation).
	Participation float64
	// From and To are the first and last 1-based rounds counted (a cell: 1 and
	// train.rounds; `bench --methods`: the rounds it times).
	From, To int
}

// TrainedBefore is the chance that a client sampled in a round counted by c has been
// sampled in an earlier round for which counts reports true, averaged over c's rounds:
// 1 − (1 − participation)^k in a round preceded by k such rounds, each round sampling its
// clients afresh. A method whose client does more once it has trained (a mask grown in an
// earlier round) scales its extra work by it. With no rounds given (From 0) it is 1: the
// steady state, every client trained before.
func (c CostOf) TrainedBefore(counts func(round int) bool) float64 {
	if c.To < c.From || c.From < 1 {
		return 1
	}
	q := min(max(c.Participation, 0), 1)
	k, sum := 0, 0.0
	for r := 1; r <= c.To; r++ {
		if r >= c.From {
			sum += 1 - math.Pow(1-q, float64(k))
		}
		if counts(r) {
			k++
		}
	}
	return sum / float64(c.To-c.From+1)
}

// ImpliedCost is the work a method's round implies, as a multiple of FedAvg's round (plain
// local training: one forward and one backward pass per sample and epoch; a forward pass
// alone counts a third), and how it was counted.
type ImpliedCost struct {
	Multiple float64
	Why      string
}

// CostIs declares one implied cost whatever the run's options.
func CostIs(multiple float64, why string) func(CostOf) ImpliedCost {
	return func(CostOf) ImpliedCost { return ImpliedCost{Multiple: multiple, Why: why} }
}

// PlainTraining is the implied cost of a method whose round is FedAvg's local training with
// per-tensor work (masks, merges, averaging) that is small beside it.
var PlainTraining = CostIs(1, "local training as FedAvg's; its own work is per-parameter, once a client")

// MethodCost returns the implied cost of the registered method called name for a run as
// of describes it, the method's defaults standing in for the options and parameters it
// leaves out (ok false when the method declares none).
func MethodCost(name string, of CostOf) (ImpliedCost, bool) {
	d, ok := LookupMethod(name)
	if !ok || d.Cost == nil {
		return ImpliedCost{}, false
	}
	nums, words := d.Defaults()
	maps.Copy(nums, of.Params)
	maps.Copy(words, of.Options)
	of.Epochs, of.Options, of.Params = max(1, of.Epochs), words, nums
	return d.Cost(of), true
}

// RunCost is the CostOf of run r's whole training: its epochs, options, parameters and
// participation, over rounds 1 to train.rounds.
func RunCost(r Run) CostOf {
	return CostOf{Epochs: r.Train.LocalEpochs, Options: r.Options, Params: r.Params,
		Participation: r.Train.Participation, From: 1, To: r.Train.Rounds}
}

// ParamDef describes one method parameter, as read from its struct field's tags.
type ParamDef struct {
	Name    string
	Default float64
	// Check uses the rules of the manifest's `check` tags (gt0, ge0, frac, unit, lt1).
	Check   string
	Choices []string
	Text    bool
	Doc     string
	// index is the field's path in the parameter struct.
	index []int
}

// IsWord reports whether the parameter takes a string (Choices or Text).
func (p ParamDef) IsWord() bool { return p.Choices != nil || p.Text }

var (
	registryMu sync.RWMutex
	registry   = map[string]MethodDef{}
)

// RegisterMethod adds a method to the catalogue manifests are validated against. It panics
// when the name is taken or the parameter struct's tags are malformed: both are programming
// errors, found when the registering package is initialized.
func RegisterMethod(d MethodDef) {
	if d.Name == "" {
		panic("manifest.RegisterMethod: a method needs a name")
	}
	params, err := paramDefs(d.Params)
	if err != nil {
		panic(fmt.Sprintf("manifest.RegisterMethod(%s): %v", d.Name, err))
	}
	d.params = params
	if err := checkScoreQuantile(d.ScoreQuantile, params); err != nil {
		panic(fmt.Sprintf("manifest.RegisterMethod(%s): %v", d.Name, err))
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[d.Name]; dup {
		panic(fmt.Sprintf("manifest.RegisterMethod: method %q registered twice", d.Name))
	}
	registry[d.Name] = d
}

// CostReference reports whether the registered method called name is the cost reference
// (MethodDef.CostReference).
func CostReference(name string) bool {
	d, _ := LookupMethod(name)
	return d.CostReference
}

// LookupMethod returns the registered method called name.
func LookupMethod(name string) (MethodDef, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	d, ok := registry[name]
	return d, ok
}

// DisplayName is the registered method's name as its paper writes it (MethodDef.Display),
// else name itself.
func DisplayName(name string) string {
	if d, ok := LookupMethod(name); ok && d.Display != "" {
		return d.Display
	}
	return name
}

// DisplayLabel is a run label with its method's display name in place of the method's id
// ("fedavg lr=0.1" → "FedAvg lr=0.1"), as tables and legends print it; a label of the
// manifest's own choosing ("fedavg-ft") stays as written.
func DisplayLabel(label, method string) string {
	return LabelAs(label, method, DisplayName(method))
}

// LabelAs is DisplayLabel with the method's name given as display (a reader that already
// holds it): label with display in place of method's id when label starts with that id.
func LabelAs(label, method, display string) string {
	if label == method || strings.HasPrefix(label, method+" ") {
		return display + strings.TrimPrefix(label, method)
	}
	return label
}

// MethodNames lists the registered methods, sorted.
func MethodNames() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var s []string
	for n := range registry {
		s = append(s, n)
	}
	sort.Strings(s)
	return s
}

// ParamDefs lists the method's parameters in their struct's field order.
func (d MethodDef) ParamDefs() []ParamDef { return append([]ParamDef(nil), d.params...) }

func (d MethodDef) param(name string) (ParamDef, bool) {
	for _, p := range d.params {
		if p.Name == name {
			return p, true
		}
	}
	return ParamDef{}, false
}

func (d MethodDef) paramNames() []string {
	var s []string
	for _, p := range d.params {
		s = append(s, p.Name)
	}
	return s
}

// Defaults returns the method's parameters with their defaults: numbers in params, words
// in options, as a Run holds them before the manifest's values are applied.
func (d MethodDef) Defaults() (params map[string]float64, options map[string]string) {
	params, options = map[string]float64{}, map[string]string{}
	for _, p := range d.params {
		if p.Choices != nil {
			options[p.Name] = p.Choices[0]
		} else if p.Text {
			options[p.Name] = ""
		} else {
			params[p.Name] = p.Default
		}
	}
	return params, options
}

// DefaultParams returns the registered method's defaults (MethodDef.Defaults); both maps
// are empty for an unknown method.
func DefaultParams(method string) (map[string]float64, map[string]string) {
	d, _ := LookupMethod(method)
	return d.Defaults()
}

// MethodParams returns a new parameter struct of the run's method (a pointer, as its
// MethodDef.Params returns) holding the run's Params and Options; nil for a method that
// takes none. The run's maps are what the train stage's key hashes; the struct is how the
// method reads them.
func MethodParams(r *Run) (any, error) {
	d, ok := LookupMethod(r.Method)
	if !ok {
		return nil, fmt.Errorf("method %q is not implemented", r.Method)
	}
	if d.Params == nil {
		return nil, nil
	}
	ptr := d.Params()
	v := reflect.ValueOf(ptr).Elem()
	for _, p := range d.params {
		f := v.FieldByIndex(p.index)
		if f.Kind() == reflect.String {
			f.SetString(r.Options[p.Name])
			continue
		}
		x := r.Params[p.Name]
		switch f.Kind() {
		case reflect.Float64, reflect.Float32:
			f.SetFloat(x)
		case reflect.Int:
			f.SetInt(int64(int(x)))
		case reflect.Bool:
			f.SetBool(x != 0)
		}
	}
	return ptr, nil
}

// paramDefs reads the parameter struct's tags.
func paramDefs(newParams func() any) ([]ParamDef, error) {
	if newParams == nil {
		return nil, nil
	}
	t := reflect.TypeOf(newParams())
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("Params must return a pointer to a struct, not %v", t)
	}
	var out []ParamDef
	var walk func(t reflect.Type, index []int) error
	walk = func(t reflect.Type, index []int) error {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				if err := walk(f.Type, idx); err != nil {
					return err
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			p := ParamDef{Name: f.Tag.Get("param"), Check: f.Tag.Get("check"), Doc: f.Tag.Get("doc"), index: idx}
			if p.Name == "" {
				return fmt.Errorf("field %s has no param tag", f.Name)
			}
			for _, q := range out {
				if q.Name == p.Name {
					return fmt.Errorf("parameter %q declared twice", p.Name)
				}
			}
			def, hasDef := f.Tag.Lookup("default")
			switch f.Type.Kind() {
			case reflect.String:
				if c := f.Tag.Get("choices"); c != "" {
					p.Choices = strings.Split(c, "|")
				} else {
					p.Text = true
				}
				if hasDef || p.Check != "" {
					return fmt.Errorf("word parameter %q takes choices, not a default or check", p.Name)
				}
			case reflect.Float64, reflect.Float32, reflect.Int, reflect.Bool:
				if hasDef {
					x, err := strconv.ParseFloat(def, 64)
					if err != nil {
						return fmt.Errorf("parameter %q: default %q is not a number", p.Name, def)
					}
					p.Default = x
				}
			default:
				return fmt.Errorf("parameter %q has type %v; use float64, float32, int, bool or string", p.Name, f.Type)
			}
			out = append(out, p)
		}
		return nil
	}
	return out, walk(t.Elem(), nil)
}

// checkScoreQuantile says what is wrong with a method's ScoreQuantile: each name must be
// one of its parameters, Score a word and Q a number.
func checkScoreQuantile(sq ScoreQuantile, params []ParamDef) error {
	if !sq.Declared() {
		return nil
	}
	kind := map[string]bool{} // name -> is a word
	for _, p := range params {
		kind[p.Name] = p.IsWord()
	}
	if word, ok := kind[sq.Score]; !ok || !word {
		return fmt.Errorf("ScoreQuantile.Score %q is not a word parameter of the method", sq.Score)
	}
	if word, ok := kind[sq.Q]; !ok || word {
		return fmt.Errorf("ScoreQuantile.Q %q is not a number parameter of the method", sq.Q)
	}
	return nil
}
