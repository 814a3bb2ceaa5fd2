package manifest

// Limits on what a manifest may ask for: the cell count, rounds, clients, seeds, epochs,
// sizes and names, checked before expansion (checkBounds) and per run (checkRunBounds).

import (
	"fmt"
	"math"
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
	info := datasetDef(r.Dataset.Name)
	if lim.MaxClients > 0 && info.Generated && r.Dataset.Devices > lim.MaxClients {
		return m.errAtField(field("dataset.devices"), "%d devices exceed the limit of %d clients (raise it with --max-clients)", r.Dataset.Devices, lim.MaxClients)
	}
	if lim.MaxClients > 0 && r.Partition.Clients > lim.MaxClients {
		return m.errAtField(field("partition.clients"), "%d clients exceed the limit of %d (raise it with --max-clients)", r.Partition.Clients, lim.MaxClients)
	}
	if info.Generated && r.Dataset.Features > 1<<20 {
		return m.errAtField(field("dataset.features"), "%d features exceed the limit of %d", r.Dataset.Features, 1<<20)
	}
	if info.Generated && r.Dataset.Classes > 1<<16 {
		return m.errAtField(field("dataset.classes"), "%d classes exceed the limit of %d", r.Dataset.Classes, 1<<16)
	}
	if s := r.Dataset.ImageSize; s > 4096 {
		return m.errAtField(field("dataset.image_size"), "%d pixels exceed the limit of 4096", s)
	}
	n := pooledSamples(info, r.Dataset)
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
			classes := max(info.Variants[r.Dataset.Variant].Classes, r.Dataset.Classes, 1)
			switch {
			case info.Generated && 5*float64(r.Dataset.Devices)*info.DeviceSamples*dim > est/2:
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
