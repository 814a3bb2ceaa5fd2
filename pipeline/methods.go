package pipeline

import "sort"

// ParamDef declares one method parameter: its name, default and allowed range.
type ParamDef struct {
	Name    string
	Default float64
	// Check uses the rules of the manifest's `check` tags (gt0, ge0, frac, unit, lt1).
	Check string
	Doc   string
}

// MethodDef declares a training method known to manifests. The train stage implements it.
type MethodDef struct {
	Name string
	Doc  string
	// Personal is true when each client ends with its own model (evaluated on its own test
	// split); false when every client is evaluated with the one global model.
	Personal bool
	Params   []ParamDef
}

func (d MethodDef) param(name string) (ParamDef, bool) {
	for _, p := range d.Params {
		if p.Name == name {
			return p, true
		}
	}
	return ParamDef{}, false
}

func (d MethodDef) paramNames() []string {
	var s []string
	for _, p := range d.Params {
		s = append(s, p.Name)
	}
	return s
}

// Methods is the catalogue of methods a manifest may name.
var Methods = map[string]MethodDef{
	"fedavg": {Name: "fedavg", Doc: "FedAvg (McMahan et al.): the server averages the sampled clients' models weighted by training-set size; every client is evaluated with the global model."},
	"local":  {Name: "local", Personal: true, Doc: "Local training: each client trains only on its own data and never communicates."},
}

// MethodNames lists the known methods, sorted.
func MethodNames() []string {
	var s []string
	for n := range Methods {
		s = append(s, n)
	}
	sort.Strings(s)
	return s
}
