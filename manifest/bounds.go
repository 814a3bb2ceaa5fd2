package manifest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/fedpipe/fedpipe/model/arch"
	"gopkg.in/yaml.v3"
)

// Limits bound what a manifest may ask for, so that no input can exhaust memory or disk or
// run for ever before anything is written: each is checked while the manifest is validated,
// before any store is opened, and an error names the field, the value and the limit.
type Limits struct {
	// MaxCells bounds the runs of the matrix (methods × grid × method grid × seeds),
	// counted before expansion (fedpipe's --max-cells).
	MaxCells int
	// MaxRounds bounds train.rounds (--max-rounds).
	MaxRounds int
	// MaxClients bounds partition.clients and dataset.devices (--max-clients).
	MaxClients int
	// MaxSeeds bounds the number of seeds.
	MaxSeeds int
	// MaxEpochs bounds train.local_epochs and train.finetune_epochs.
	MaxEpochs int
	// MemoryBytes is the machine's memory: a run whose estimated footprint exceeds it is
	// refused with the estimate. 0 disables the check.
	MemoryBytes float64
}

// DefaultLimits are the limits ParseManifest and LoadManifest apply. They leave the memory
// check off, so that whether a manifest parses does not depend on the machine; the fedpipe
// command sets MemoryBytes to MachineMemory().
var DefaultLimits = Limits{MaxCells: 10000, MaxRounds: 100000, MaxClients: 100000, MaxSeeds: 1000,
	MaxEpochs: 10000}

// MachineMemory returns the machine's total memory in bytes from /proc/meminfo, or 0.
func MachineMemory() float64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
			fields := strings.Fields(v)
			if len(fields) > 0 {
				if kb, err := strconv.ParseFloat(fields[0], 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// FormatBytes renders a byte count as "1.5 GiB".
func FormatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}

// CountCells returns the number of runs the manifest expands to, computed from the lengths
// of the grid lists without expanding them, and saturating at math.MaxInt64 (a grid of a
// thousand lists of a thousand values is counted as fast as a small one).
func (m *Manifest) CountCells() (int64, error) {
	top, err := m.parseGrid(&m.Grid, "grid", false)
	if err != nil {
		return 0, err
	}
	topN := axesProduct(top)
	var total int64
	for i := range m.Methods {
		own, err := m.parseGrid(&m.Methods[i].Grid, fmt.Sprintf("methods[%d].grid", i), true)
		if err != nil {
			return 0, err
		}
		total = satAdd(total, satMul(satMul(topN, axesProduct(own)), int64(len(m.Seeds))))
	}
	return total, nil
}

func axesProduct(axes []gridAxis) int64 {
	n := int64(1)
	for _, a := range axes {
		n = satMul(n, int64(len(a.values)))
	}
	return n
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// checkBounds checks what can be bounded before expansion: the cell count, the seeds and
// the names. Per-run bounds (which grid values may change) are in checkRunBounds.
func (m *Manifest) checkBounds(root *yaml.Node) error {
	lim := m.limits
	if err := checkLabel(m, "name", m.Name); err != nil {
		return err
	}
	folded := map[string]int{} // method names by their case-folded form
	for i, ms := range m.Methods {
		f := fmt.Sprintf("methods[%d].name", i)
		if err := checkLabel(m, f, ms.Name); err != nil {
			return err
		}
		key := strings.ToLower(ms.Name)
		if j, dup := folded[key]; dup && m.Methods[j].Name != ms.Name {
			return m.ErrAt(f, "%q differs from methods[%d]'s %q only by case: their folders and files would be one on macOS and Windows; rename one",
				ms.Name, j, m.Methods[j].Name)
		}
		folded[key] = i
	}
	for _, r := range m.Description {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return m.ErrAt("description", "holds the control character %s: it is printed in the report", strconv.QuoteRune(r))
		}
	}
	if lim.MaxSeeds > 0 && len(m.Seeds) > lim.MaxSeeds {
		return m.ErrAt("seeds", "%d seeds exceed the limit of %d", len(m.Seeds), lim.MaxSeeds)
	}
	for _, l := range []struct {
		f string
		n int
	}{{"shift.degrees", len(m.Shift.Degrees)}, {"shift.corruptions", len(m.Shift.Corruptions)},
		{"shift.severities", len(m.Shift.Severities)}, {"shift.label_alpha", len(m.Shift.LabelAlpha)}} {
		if l.n > 100 {
			return m.ErrAt(l.f, "%d entries exceed the limit of 100", l.n)
		}
	}
	first := map[int64]int{}
	for i, s := range m.Seeds {
		if j, dup := first[s]; dup {
			return m.ErrAt("seeds", "seed %d listed twice (seeds[%d] and seeds[%d]): every seed is one run, so a repeated seed would be dropped", s, j, i)
		}
		first[s] = i
	}
	cells, err := m.CountCells()
	if err != nil {
		return err
	}
	if lim.MaxCells > 0 && cells > int64(lim.MaxCells) {
		field := "grid"
		if _, set := m.Pos[field]; !set {
			field = "methods"
		}
		if _, set := m.Pos[field]; !set {
			field = "seeds"
		}
		e := m.ErrAt(field, "%s cells (methods × grid × method grids × seeds) exceed --max-cells %d: split the manifest or raise --max-cells", fmtCount(cells), lim.MaxCells)
		if ie, ok := e.(*InputError); ok && ie.Line == 0 {
			ie.Line = root.Line
		}
		return e
	}
	return nil
}

func fmtCount(n int64) string {
	if n == math.MaxInt64 {
		return "more than 9.2e18"
	}
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// checkName refuses control characters (newline, NUL, escape…) in a name that labels
// reports and tables: they would break report.md and terminal output. Bidirectional
// controls (U+202E, right-to-left override, …) are refused too: they reorder how the text
// after them is shown, so a label could display as another.
func checkName(m *Manifest, field, name string) error {
	for _, r := range name {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return m.ErrAt(field, "%s holds the control character %s: names label reports and tables, use printable characters", strconv.Quote(name), strconv.QuoteRune(r))
		}
		if unicode.Is(unicode.Bidi_Control, r) {
			return m.ErrAt(field, "%s holds the bidirectional control character %U: it reorders how the name is shown, so one label could look like another; remove it",
				strconv.Quote(name), r)
		}
	}
	return nil
}

// checkLabel is checkName for the manifest's and methods' names, which also name folders
// and files: no space may begin or end one ("fedavg " would look like "fedavg").
func checkLabel(m *Manifest, field, name string) error {
	if err := checkName(m, field, name); err != nil {
		return err
	}
	if strings.TrimSpace(name) != name {
		return m.ErrAt(field, "%s begins or ends with a space: it would look like %q in reports; remove the space", strconv.Quote(name), strings.TrimSpace(name))
	}
	return nil
}

// sampleDims returns the float32 values of one sample of the run's dataset and how many
// samples it has (0: unknown before loading), as known before any file is read.
func sampleDims(r *Run) (dim float64, side int, channels int) {
	ds := r.Dataset
	switch ds.Name {
	case "synthetic":
		return float64(ds.Features), 0, 0
	case "har":
		return 561, 0, 0
	case "cifar10", "cifar100", "cifar10c", "svhn":
		return 32 * 32 * 3, 32, 3
	case "medmnist":
		return 28 * 28 * 3, 28, 3
	case "officehome", "miniimagenet":
		s := ds.ImageSize
		if s == 0 {
			s = 224
			if ds.Name == "miniimagenet" {
				s = 84
			}
		}
		return float64(s * s * 3), s, 3
	}
	return 28 * 28, 28, 1
}

// paramCount estimates the model's parameter count (arch.ParamCount).
func paramCount(r *Run, dim float64, side, channels, classes int) float64 {
	return arch.ParamCount(r.Model.Arch, dim, side, channels, classes, r.Model.Hidden)
}

// MemoryEstimate estimates a run's peak memory in bytes: the pooled data as float32 (and
// a quarter more for the raw files), a model per client plus the server's and the optimizer's copies, and
// one mini-batch's activations and gradients. It is an order of magnitude, meant to refuse
// what cannot fit, not to predict usage.
func MemoryEstimate(r *Run) float64 {
	dim, side, channels := sampleDims(r)
	info := datasetInfos[r.Dataset.Name]
	counts := info.variants[r.Dataset.Variant]
	n, classes := float64(counts[0]), counts[1]
	if r.Dataset.Name == "synthetic" {
		// FedProx's device sizes: ⌊lognormal(4, 2)⌋ + 50, mean e^(4+2²/2) + 50.
		n, classes = float64(r.Dataset.Devices)*(math.Exp(6)+50), r.Dataset.Classes
	}
	if r.Dataset.MaxSamples > 0 {
		n = math.Min(n, float64(r.Dataset.MaxSamples))
	}
	if classes == 0 {
		classes = 100
	}
	params := paramCount(r, dim, side, channels, classes)
	clients := float64(max(r.Partition.Clients, 1))
	batch := float64(r.Train.BatchSize)
	return 4 * (1.25*n*dim + params*(2*clients+4) + batch*activations(r, dim, classes))
}

// activations is the order of magnitude of one sample's activations and their gradients
// (floats) in a training step.
func activations(r *Run, dim float64, classes int) float64 {
	act := dim * 64 // conv feature maps, their gradients and BatchNorm intermediates
	switch r.Model.Arch {
	case arch.ResNet18:
		act = dim * 512 // no down-sampling stem: 64 channels at full resolution
	case arch.ResNet18ImageNet:
		act = dim * 32
	case arch.MLP, arch.LogReg:
		act = dim + float64(classes)
		for _, h := range r.Model.Hidden {
			act += float64(h)
		}
		act *= 4
	}
	return act
}

// LockstepEstimate estimates, in bytes, a run's device memory when its clients train in one
// compiled step (on XLA): every client at once (an evaluation fine-tunes all of them), each
// with its parameters, momentum and a batch's activations. An order of magnitude, as
// MemoryEstimate.
func LockstepEstimate(r *Run) float64 {
	dim, side, channels := sampleDims(r)
	classes := datasetInfos[r.Dataset.Name].variants[r.Dataset.Variant][1]
	if r.Dataset.Name == "synthetic" {
		classes = r.Dataset.Classes
	}
	if classes == 0 {
		classes = 100
	}
	params := paramCount(r, dim, side, channels, classes)
	clients := float64(max(r.Partition.Clients, 1))
	return 4 * clients * (3*params + float64(r.Train.BatchSize)*activations(r, dim, classes))
}

// checkRunBounds checks one run's sizes against the limits and the machine's memory.
func (m *Manifest) checkRunBounds(r *Run, mi int) error {
	lim := m.limits
	field := func(path string) string { return m.boundField(path, mi) }
	for _, a := range r.Vary {
		if err := checkName(m, field(a.Path), a.Value); err != nil {
			return err
		}
	}
	for k, v := range r.Options {
		if err := checkName(m, fmt.Sprintf("methods[%d].params.%s", mi, k), v); err != nil {
			return err
		}
	}
	t := &r.Train
	if lim.MaxRounds > 0 && t.Rounds > lim.MaxRounds {
		return m.errAtField(field("train.rounds"), "%d rounds exceed the limit of %d (raise it with --max-rounds)", t.Rounds, lim.MaxRounds)
	}
	if lim.MaxEpochs > 0 && t.LocalEpochs > lim.MaxEpochs {
		return m.errAtField(field("train.local_epochs"), "%d local epochs exceed the limit of %d", t.LocalEpochs, lim.MaxEpochs)
	}
	if lim.MaxEpochs > 0 && t.FinetuneEpochs > lim.MaxEpochs {
		return m.errAtField(field("train.finetune_epochs"), "%d fine-tuning epochs exceed the limit of %d", t.FinetuneEpochs, lim.MaxEpochs)
	}
	if r.Partition.TestFraction == 0 {
		return m.errAtField(field("partition.test_fraction"), "0 leaves no test data, but every run is evaluated on its clients' test splits: use e.g. 0.25")
	}
	if lim.MaxClients > 0 && r.Dataset.Name == "synthetic" && r.Dataset.Devices > lim.MaxClients {
		return m.errAtField(field("dataset.devices"), "%d devices exceed the limit of %d clients (raise it with --max-clients)", r.Dataset.Devices, lim.MaxClients)
	}
	if lim.MaxClients > 0 && r.Partition.Clients > lim.MaxClients {
		return m.errAtField(field("partition.clients"), "%d clients exceed the limit of %d (raise it with --max-clients)", r.Partition.Clients, lim.MaxClients)
	}
	if r.Dataset.Name == "synthetic" && r.Dataset.Features > 1<<20 {
		return m.errAtField(field("dataset.features"), "%d features exceed the limit of %d", r.Dataset.Features, 1<<20)
	}
	if r.Dataset.Name == "synthetic" && r.Dataset.Classes > 1<<16 {
		return m.errAtField(field("dataset.classes"), "%d classes exceed the limit of %d", r.Dataset.Classes, 1<<16)
	}
	if s := r.Dataset.ImageSize; s > 4096 {
		return m.errAtField(field("dataset.image_size"), "%d pixels exceed the limit of 4096", s)
	}
	info := datasetInfos[r.Dataset.Name]
	n := info.variants[r.Dataset.Variant][0]
	if r.Dataset.Name == "cifar10c" && r.Dataset.Severity == 0 {
		n *= 5
	}
	if r.Dataset.MaxSamples > 0 && (n == 0 || r.Dataset.MaxSamples < n) {
		n = r.Dataset.MaxSamples
	}
	if n > 0 && t.BatchSize > n {
		return m.errAtField(field("train.batch_size"), "%d exceeds the %d samples of %s: a batch cannot be larger than the data", t.BatchSize, n, r.Dataset.Name)
	}
	if t.BatchSize > 1<<20 {
		return m.errAtField(field("train.batch_size"), "%d exceeds the limit of %d", t.BatchSize, 1<<20)
	}
	{
		p := &r.Partition
		most, what := 1<<31, "the limit of 2147483648"
		if n > 0 {
			most, what = n, fmt.Sprintf("the %d samples of %s", n, r.Dataset.Name)
		}
		for _, c := range []struct {
			f string
			v int
		}{{"partition.min_samples", p.MinSamples}, {"partition.samples_per_client", p.SamplesPerClient}, {"partition.shards", p.Shards}} {
			if c.v > most {
				return m.errAtField(field(c.f), "%d exceeds %s", c.v, what)
			}
		}
	}
	if _, side, _ := sampleDims(r); side > 0 {
		if t.CropPadding > side {
			return m.errAtField(field("train.crop_padding"), "%d pixels of padding exceed the image side of %d", t.CropPadding, side)
		}
		if least := arch.MinSide(r.Model.Arch); side < least {
			return m.errAtField(field("dataset.image_size"), "%s needs images of at least %d×%d pixels, got %d×%d", r.Model.Arch, least, least, side, side)
		}
	}
	if len(r.Model.Hidden) > 100 && r.Model.Arch == arch.MLP {
		return m.errAtField(field("model.hidden"), "%d hidden layers exceed the limit of 100", len(r.Model.Hidden))
	}
	for i, h := range r.Model.Hidden {
		if r.Model.Arch == arch.MLP && h > 1<<20 {
			return m.errAtField(field("model.hidden"), "width %d (hidden[%d]) exceeds the limit of %d", h, i, 1<<20)
		}
	}
	if lim.MemoryBytes > 0 {
		if est := MemoryEstimate(r); est > lim.MemoryBytes {
			big := "train.batch_size"
			dim, side, ch := sampleDims(r)
			classes := max(info.variants[r.Dataset.Variant][1], r.Dataset.Classes, 1)
			switch {
			case r.Dataset.Name == "synthetic" && 5*float64(r.Dataset.Devices)*(math.Exp(6)+50)*dim > est/2:
				big = "dataset.devices"
			case paramCount(r, dim, side, ch, classes)*4*float64(2*max(r.Partition.Clients, 1)+4) > est/2:
				big = "model.hidden"
				if r.Model.Arch != arch.MLP {
					big = "partition.clients"
				}
			}
			return m.errAtField(field(big), "%s needs an estimated %s of memory, more than this machine's %s (%s)",
				r.Label(), FormatBytes(est), FormatBytes(lim.MemoryBytes), estimateParts(r))
		}
	}
	return nil
}

// estimateParts says what the estimate is made of, for the error message.
func estimateParts(r *Run) string {
	return fmt.Sprintf("model %s, batch_size %d, %d clients, dataset %s", r.Model.Arch, r.Train.BatchSize, r.Partition.Clients, r.Dataset.Name)
}

// boundField names where a run's value of path was set: the method's own train block or
// grid, the top-level grid, or the field itself.
func (m *Manifest) boundField(path string, mi int) string {
	sec, name, _ := strings.Cut(path, ".")
	f := fmt.Sprintf("methods[%d]", mi)
	if sec == "train" {
		if _, set := m.Pos[f+".train."+name]; set {
			return f + ".train." + name
		}
		if findKey(&m.Methods[mi].Train, name) != nil {
			return f + ".train." + name
		}
	}
	if findKey(&m.Methods[mi].Grid, path) != nil {
		return f + ".grid." + path
	}
	if findKey(&m.Grid, path) != nil {
		return "grid." + path
	}
	return path
}

// errAtField is ErrAt that also finds positions inside grids and method train blocks, and
// falls back on the section's line, so that every bound error names a line.
func (m *Manifest) errAtField(field, format string, args ...any) error {
	e := m.ErrAt(field, format, args...).(*InputError)
	if e.Line > 0 {
		return e
	}
	var n *yaml.Node
	switch {
	case strings.HasPrefix(field, "grid."):
		n = findKey(&m.Grid, strings.TrimPrefix(field, "grid."))
	case strings.HasPrefix(field, "methods["):
		var i int
		var rest string
		if _, err := fmt.Sscanf(field, "methods[%d]", &i); err == nil && i < len(m.Methods) {
			rest = field[strings.Index(field, "]")+2:]
			if g, ok := strings.CutPrefix(rest, "grid."); ok {
				n = findKey(&m.Methods[i].Grid, g)
			} else if t, ok := strings.CutPrefix(rest, "train."); ok {
				n = findKey(&m.Methods[i].Train, t)
			}
		}
	}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
		return e
	}
	sec, _, _ := strings.Cut(field, ".")
	if p, ok := m.Pos[sec]; ok {
		e.Line, e.Column = p.Line, p.Column
	} else {
		e.Line = 1
	}
	return e
}

// findKey returns the key node named key in mapping n, or nil.
func findKey(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

// nearestFile is "; did you mean F?" for the manifest beside path whose name is closest to
// path's (a typo), or "" when none is close.
func nearestFile(path string) string {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			names = append(names, e.Name())
		}
	}
	if best := nearest(filepath.Base(path), names); best != "" {
		return "; did you mean " + filepath.Join(dir, best) + "?"
	}
	return ""
}

// Nearest returns the candidate closest to s by edit distance when it is close enough to be
// a plausible typo of it, else "".
func Nearest(s string, candidates []string) string { return nearest(s, candidates) }

// readManifestFile reads a manifest: standard input for "-", else a regular file only (a
// FIFO, a directory or a device is refused before it is opened for reading, so nothing
// blocks), at most maxManifestBytes.
func readManifestFile(path string) ([]byte, error) {
	if path == "" {
		return nil, &InputError{File: `""`, Msg: "empty manifest path: name a file, or - for standard input"}
	}
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		fi, err := os.Stat(path)
		if err != nil {
			msg := fmt.Sprintf("cannot read manifest: %v", errors.Unwrap(err))
			if errors.Is(err, os.ErrNotExist) {
				msg += nearestFile(path)
			}
			return nil, &InputError{File: path, Msg: msg}
		}
		if !fi.Mode().IsRegular() {
			return nil, &InputError{File: path, Msg: fmt.Sprintf("not a regular file (%s): a manifest is a YAML file; use - to read standard input", fileKind(fi.Mode()))}
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, &InputError{File: path, Msg: fmt.Sprintf("cannot read manifest: %v", errors.Unwrap(err))}
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxManifestBytes+1))
	if err != nil {
		return nil, &InputError{File: path, Msg: fmt.Sprintf("cannot read manifest: %v", err)}
	}
	if len(b) > maxManifestBytes {
		return nil, &InputError{File: path, Msg: fmt.Sprintf("manifest larger than the limit of %s", FormatBytes(maxManifestBytes))}
	}
	return b, nil
}

// maxManifestBytes bounds a manifest's size: the largest in manifests/ is a few KiB.
const maxManifestBytes = 16 << 20

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}
