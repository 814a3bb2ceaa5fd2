// Package manifest is the experiment description: the YAML schema, its decoding with
// positions (every error names file:line and the field), defaults, validation, the method
// and dataset catalogues, and the expansion of the grid into runs. It imports no executor,
// no stage and no GoMLX: everything that reads a manifest depends on this package.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fedpipe/fedpipe/errs"
)

// Manifest is a parsed, validated experiment description. See docs/manifests.md for the reference.
type Manifest struct {
	Name        string        `yaml:"name"`
	Description string        `yaml:"description"`
	Seeds       []int64       `yaml:"seeds" check:"ge0"`
	Dataset     DatasetSpec   `yaml:"dataset"`
	Partition   PartitionSpec `yaml:"partition"`
	Model       ModelSpec     `yaml:"model"`
	Train       TrainSpec     `yaml:"train"`
	Methods     []MethodSpec  `yaml:"methods"`
	Grid        yaml.Node     `yaml:"grid"`
	// Shift adds an evaluate-under-shift stage to every run.
	Shift ShiftSpec `yaml:"shift"`
	// Logs are the authors' published run logs of the manifest's methods (logs.go): data
	// shown beside the kept curves, never part of a key.
	Logs []LoggedRun `yaml:"logs"`
	// Expect records published numbers this manifest reproduces. They never change a
	// stage's key; `fedpipe verify` compares them with the measured figures.
	Expect []Expectation `yaml:"expect"`
	// Claims record what the paper concludes from the table (which method is best, which
	// above which). They never change a stage's key; verify gives each a verdict.
	Claims []Claim `yaml:"claims"`

	// File is the path the manifest was read from.
	File string `yaml:"-"`
	// Pos maps a field path (e.g. "methods[1].train.lr") to where it was set (a negative
	// line: by the override Overrides[-line-1]).
	Pos map[string]Pos `yaml:"-"`
	// Overrides are the `--set path=value` applied to the file, in order.
	Overrides []string `yaml:"-"`
	// Effective is the manifest as decoded: the file's bytes, or with overrides the YAML
	// tree they were applied to, re-encoded.
	Effective []byte `yaml:"-"`

	limits Limits // what the manifest was checked against (bounds.go)
}

// DefaultManifest returns the values a manifest starts from before its file is applied.
func defaultManifest() Manifest {
	return Manifest{
		Seeds:     []int64{0},
		Dataset:   DatasetSpec{Alpha: 0.5, Beta: 0.5, Devices: 30, Features: 60, Classes: 10},
		Partition: PartitionSpec{Scheme: "dirichlet", Clients: 10, Alpha: 0.5, MinSamples: 10, Shards: 2, ClassesPerClient: 2, TestFraction: 0.25},
		Model:     ModelSpec{Hidden: []int{200}, BNStats: "local", BNParams: "shared"},
		Train: TrainSpec{Rounds: 10, Participation: 1, LocalEpochs: 1, BatchSize: 32,
			LR: 0.01, EvalEvery: 1, CheckpointEvery: 1, CropPadding: 4},
	}
}

// ErrInvalid wraps every InputError; errors.Is(err, ErrInvalid) tells callers to exit 2.
// It is errs.ErrInvalid, the leaf package's, so that packages below manifest (the store's
// directory, the bench) match the same error without importing manifest.
var ErrInvalid = errs.ErrInvalid

// Is lets errors.Is(err, ErrInvalid) match any InputError.
func (e *InputError) Is(target error) bool { return target == ErrInvalid }

// Options say how a manifest is read: the `--set` overrides applied to its YAML tree
// before decoding ("path=value", see ApplyOverride), and the limits it is checked against.
type Options struct {
	Overrides []string
	Limits    Limits
}

// LoadManifest reads, decodes and validates the manifest at path under DefaultLimits.
func LoadManifest(path string) (*Manifest, error) {
	return LoadManifestOptions(path, Options{Limits: DefaultLimits})
}

// LoadManifestOptions reads, decodes and validates the manifest at path. Only a regular
// file is read ("-" reads standard input), so a FIFO or a device cannot block.
func LoadManifestOptions(path string, opt Options) (*Manifest, error) {
	b, err := readManifestFile(path)
	if err != nil {
		return nil, err
	}
	return ParseManifestOptions(path, b, opt)
}

// ParseManifest decodes and validates manifest bytes under DefaultLimits; file names the
// source in errors.
func ParseManifest(file string, b []byte) (*Manifest, error) {
	return ParseManifestOptions(file, b, Options{Limits: DefaultLimits})
}

// ParseManifestOptions decodes and validates manifest bytes; file names the source in
// errors. The number of cells is counted, and refused over opt.Limits.MaxCells, before
// the grid is expanded.
func ParseManifestOptions(file string, b []byte, opt Options) (*Manifest, error) {
	m, err := parseManifest(file, b, opt.Overrides, opt.Limits)
	if err != nil {
		return nil, overrideError(err, opt.Overrides)
	}
	return m, nil
}

func parseManifest(file string, b []byte, overrides []string, lim Limits) (*Manifest, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &InputError{File: file, Msg: "manifest is empty"}
		}
		return nil, yamlSyntaxError(file, b, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 || root.Content[0].Tag == "!!null" {
		return nil, &InputError{File: file, Msg: "manifest is empty"}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &InputError{File: file, Line: extra.Line, Msg: "manifest holds more than one YAML document"}
	}
	for i, o := range overrides {
		if root.Content[0].Kind != yaml.MappingNode {
			break // the decoder reports what the file holds instead
		}
		if err := ApplyOverride(root.Content[0], o, i); err != nil {
			return nil, &InputError{File: "--set " + o, Msg: err.Error()}
		}
	}
	m := defaultManifest()
	m.File = file
	m.Pos = map[string]Pos{}
	m.Overrides = overrides
	if len(overrides) > 0 {
		m.Effective = effectiveYAML(&root)
	} else {
		m.Effective = b
	}
	m.limits = lim
	d := &decoder{file: file, pos: m.Pos}
	if err := d.decode(&root, reflect.ValueOf(&m).Elem(), ""); err != nil {
		return nil, err
	}
	if err := m.validate(root.Content[0]); err != nil {
		return nil, err
	}
	if err := m.checkBounds(root.Content[0]); err != nil {
		return nil, err
	}
	if _, err := m.Expand(); err != nil {
		return nil, err
	}
	return &m, nil
}

// yamlSyntaxError turns yaml.v3's "yaml: line N: msg" into an InputError.
func yamlSyntaxError(file string, src []byte, err error) error {
	// A tab in a line's indentation is the usual cause, and yaml.v3 never says so ("found
	// character that cannot start any token").
	if line := tabIndented(src); line > 0 && (strings.Contains(err.Error(), "cannot start any token") || strings.Contains(err.Error(), "tab")) {
		return &InputError{File: file, Line: line, Msg: fmt.Sprintf("tab at line %d: YAML indents with spaces, not tabs", line)}
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if _, e := fmt.Sscanf(msg, "line %d:", &line); e == nil {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
		// yaml.v3 reports errors raised inside a flow or block collection at the 0-based
		// line where the collection starts; make it 1-based like every other position.
		if strings.HasPrefix(msg, "did not find expected") {
			line++
			msg += " (in the collection that starts on this line)"
		}
	}
	return &InputError{File: file, Line: line, Msg: "YAML syntax: " + msg}
}

// tabIndented is the first line (1-based) of src whose indentation holds a tab; 0: none.
func tabIndented(src []byte) int {
	for i, line := range strings.Split(string(src), "\n") {
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		if strings.Contains(indent, "\t") && strings.TrimSpace(line) != "" {
			return i + 1
		}
	}
	return 0
}

// EffectiveDescription is the manifest's description as the runs it describes now have it:
// the file's, and under it the overrides applied to it (--set/-S), which may make a sentence
// of the file's no longer true ("over 20 rounds" under train.rounds=40), so a report never
// prints it alone.
func (m *Manifest) EffectiveDescription() string {
	d := strings.TrimSpace(m.Description)
	if len(m.Overrides) == 0 {
		return d
	}
	sets := make([]string, len(m.Overrides))
	for i, o := range m.Overrides {
		sets[i] = "`-S " + o + "`"
	}
	with := "With overrides: " + strings.Join(sets, ", ") + " (the description above is the file's, before them)."
	if d == "" {
		return with
	}
	return d + "\n\n" + with
}

// ErrAt returns an InputError at the recorded position of field (or the file if unknown).
func (m *Manifest) ErrAt(field, format string, args ...any) error {
	p := m.Pos[field]
	return overrideError(&InputError{File: m.File, Line: p.Line, Column: p.Column, Field: field, Msg: fmt.Sprintf(format, args...)}, m.Overrides)
}

func (m *Manifest) validate(root *yaml.Node) error {
	if m.Name == "" {
		return &InputError{File: m.File, Line: root.Line, Field: "name", Msg: "missing: every manifest needs a name"}
	}
	if len(m.Seeds) == 0 {
		return m.ErrAt("seeds", "needs at least one seed")
	}
	if m.Dataset.Name == "" {
		return &InputError{File: m.File, Line: root.Line, Field: "dataset.name", Msg: "missing: choose fmnist or synthetic"}
	}
	if len(m.Methods) == 0 {
		if _, set := m.Pos["methods"]; set { // an empty list, in the file or from an override
			return m.ErrAt("methods", "empty: list at least one method (e.g. - name: fedavg)")
		}
		return &InputError{File: m.File, Line: root.Line, Field: "methods", Msg: "missing: list at least one method (e.g. - name: fedavg)"}
	}
	seen := map[string]int{}
	for i := range m.Methods {
		ms := &m.Methods[i]
		f := fmt.Sprintf("methods[%d]", i)
		if ms.Name == "" {
			return m.ErrAt(f, "every method needs a name")
		}
		if ms.Method == "" {
			ms.Method = ms.Name
		}
		def, ok := LookupMethod(ms.Method)
		if !ok {
			field, what := f+".method", ms.Method
			if _, set := m.Pos[field]; !set {
				field = f + ".name"
			}
			msg := fmt.Sprintf("unknown method %q (known: %s)", what, strings.Join(MethodNames(), ", "))
			if near := nearest(what, MethodNames()); near != "" {
				msg = fmt.Sprintf("unknown method %q (did you mean %q?)", what, near)
			}
			return m.ErrAt(field, "%s", msg)
		}
		if j, dup := seen[ms.Name]; dup {
			return m.ErrAt(f+".name", "duplicate method name %q (also methods[%d])", ms.Name, j)
		}
		seen[ms.Name] = i
		for name := range ms.Params {
			if _, ok := def.param(name); !ok {
				msg := fmt.Sprintf("method %s has no parameter %q", ms.Method, name)
				if near := nearest(name, def.paramNames()); near != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", near)
				} else if len(def.params) == 0 {
					msg += " (it takes none)"
				} else {
					msg += fmt.Sprintf(" (its parameters: %s)", strings.Join(def.paramNames(), ", "))
				}
				return m.ErrAt(f+".params."+name, "%s", msg)
			}
		}
	}
	for i, c := range m.Shift.Corruptions {
		if !slices.Contains(CorruptionNames, c) {
			msg := fmt.Sprintf("unknown corruption %q (known: %s)", c, strings.Join(CorruptionNames, ", "))
			if near := nearest(c, CorruptionNames); near != "" {
				msg = fmt.Sprintf("unknown corruption %q (did you mean %q?)", c, near)
			}
			return m.ErrAt(fmt.Sprintf("shift.corruptions[%d]", i), "%s", msg)
		}
	}
	for i, c := range m.Shift.CIFAR10C {
		if !slices.Contains(CIFAR10CNames, c) {
			msg := fmt.Sprintf("unknown CIFAR-10-C corruption %q (the release's: %s)", c, strings.Join(CIFAR10CNames, ", "))
			if near := nearest(c, CIFAR10CNames); near != "" {
				msg = fmt.Sprintf("unknown CIFAR-10-C corruption %q (did you mean %q?)", c, near)
			}
			return m.ErrAt(fmt.Sprintf("shift.cifar10c[%d]", i), "%s", msg)
		}
		if j := slices.Index(m.Shift.CIFAR10C, c); j < i {
			return m.ErrAt(fmt.Sprintf("shift.cifar10c[%d]", i), "corruption %q listed twice (also shift.cifar10c[%d])", c, j)
		}
	}
	if m.Shift.CIFAR10CPath != "" && len(m.Shift.CIFAR10C) == 0 {
		return m.ErrAt("shift.cifar10c_path", "no shift.cifar10c corruptions to read from it: list some (e.g. [gaussian_noise, fog]) or remove cifar10c_path")
	}
	if (len(m.Shift.Corruptions) > 0 || len(m.Shift.CIFAR10C) > 0) && len(m.Shift.Severities) == 0 {
		m.Shift.Severities = []int{1, 2, 3, 4, 5}
	}
	for i, sv := range m.Shift.Severities {
		if sv < 1 || sv > 5 {
			return m.ErrAt(fmt.Sprintf("shift.severities[%d]", i), "severity %d outside 1..5", sv)
		}
	}
	if len(m.Shift.Corruptions) > 0 && datasetDef(m.Dataset.Name).Generated {
		return m.ErrAt("shift.corruptions", "corruptions need image data; %s has flat features (use shift.degrees)", m.Dataset.Name)
	}
	for i, e := range m.Expect {
		f := fmt.Sprintf("expect[%d]", i)
		if _, ok := seen[e.Method]; !ok {
			var labels []string
			for _, ms := range m.Methods {
				labels = append(labels, ms.Name)
			}
			msg := fmt.Sprintf("no method labelled %q in this manifest (methods: %s)", e.Method, strings.Join(labels, ", "))
			if near := nearest(e.Method, labels); near != "" {
				msg = fmt.Sprintf("no method labelled %q in this manifest (did you mean %q?)", e.Method, near)
			}
			return m.ErrAt(f+".method", "%s", msg)
		}
		if e.Metric == "" {
			return m.ErrAt(f, "metric missing: one of final_client_mean, final_pooled, best_client_mean, best_pooled")
		}
		if e.Above != "" {
			if _, ok := seen[e.Above]; !ok {
				return m.ErrAt(f+".above", "no method labelled %q in this manifest", e.Above)
			}
			if e.Above == e.Method {
				return m.ErrAt(f+".above", "a method cannot be compared with itself")
			}
		}
		if err := m.checkShiftExpectation(f, e); err != nil {
			return err
		}
	}
	if err := m.validateClaims(seen); err != nil {
		return err
	}
	return m.validateLogs()
}

// checkShiftExpectation checks an expectation's shift selector against the shift block.
func (m *Manifest) checkShiftExpectation(f string, e Expectation) error {
	if e.Shift == "" {
		return nil
	}
	if e.Metric != "final_client_mean" && e.Metric != "final_pooled" {
		return m.ErrAt(f+".metric", "an expectation under shift compares final accuracy: use final_client_mean or final_pooled, got %q", e.Metric)
	}
	var levels []float64
	field := ""
	switch {
	case e.Shift == "degree":
		levels, field = m.Shift.Degrees, "shift.degrees"
	case e.Shift == "label":
		levels, field = m.Shift.LabelAlpha, "shift.label_alpha"
	case slices.Contains(m.Shift.Corruptions, e.Shift) || slices.ContainsFunc(m.Shift.CIFAR10C, func(c string) bool { return CIFAR10CKind(c) == e.Shift }):
		for _, s := range m.Shift.Severities {
			levels = append(levels, float64(s))
		}
		field = "shift.severities"
	default:
		kinds := append([]string(nil), m.Shift.Corruptions...)
		for _, c := range m.Shift.CIFAR10C {
			kinds = append(kinds, CIFAR10CKind(c))
		}
		msg := fmt.Sprintf("no shift %q in this manifest's shift block (degree, label, or one of its corruptions: %s)", e.Shift, strings.Join(kinds, ", "))
		if slices.Contains(m.Shift.CIFAR10C, e.Shift) {
			msg += fmt.Sprintf(" (the real CIFAR-10-C corruption is %q)", CIFAR10CKind(e.Shift))
		}
		return m.ErrAt(f+".shift", "%s", msg)
	}
	for _, l := range levels {
		if l == e.Level {
			return nil
		}
	}
	return m.ErrAt(f+".level", "level %v of shift %q is not in %s %v: add it there or pick one of those", e.Level, e.Shift, field, levels)
}
