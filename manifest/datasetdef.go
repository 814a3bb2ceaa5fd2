package manifest

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// DatasetDef declares a dataset known to manifests: what validation, the bounds, the
// memory estimate, the stage keys and captions know of it before any file is read. The
// loaders register one per dataset (RegisterDataset, from stages/data, beside the code
// that finds and reads its files): the manifest package validates against whatever is
// registered and knows no dataset by name.
type DatasetDef struct {
	// Name is dataset.name's value.
	Name string
	// Title is the dataset as its papers write it ("Fashion-MNIST"), for captions.
	Title string
	// Image: samples are Side×Side×Channels images (else flat features).
	Image bool
	// Side and Channels are an image's shape; for a dataset that is resized (Resize), Side
	// is the side when dataset.image_size is left out.
	Side, Channels int
	// Features is the flat features per sample of a dataset that is not images; 0 takes
	// them from dataset.features (a generated dataset).
	Features int
	// Resize: dataset.image_size applies (image folders).
	Resize bool
	// Natural: the data has its own clients (partition.scheme natural).
	Natural bool
	// Domains is the number of domains, one client each (partition.scheme domain); 0: none.
	Domains int
	// Variants maps each allowed dataset.variant to the pooled counts of its released files
	// (every official split); "" is the default. Nil allows no variant and leaves the
	// counts unknown until the data is loaded.
	Variants map[string]DatasetCounts
	// NeedVariant: the dataset has no default member; dataset.variant is required.
	NeedVariant bool
	// OpenVariants: a variant not in Variants is allowed too, its counts unknown until
	// loaded (a family whose members are not all listed).
	OpenVariants bool
	// Severities is how many severities each variant's file holds (dataset.severity picks
	// one, 0 pools them all, multiplying the counts); 0: dataset.severity does not apply.
	Severities int
	// RealCorruptions: this dataset's test images have real corrupted counterparts that
	// shift.cifar10c substitutes.
	RealCorruptions bool
	// FLBench is the name under which FL-bench keeps the dataset's normalization constants,
	// for every variant; FLBenchVariants names them per variant where they differ. Both
	// empty: FL-bench has none (see FLBenchDataset).
	FLBench         string
	FLBenchVariants map[string]string
	// Generated: the data is generated from dataset.alpha, beta, devices, features and
	// classes, reads no files, and those parameters are part of its stage keys; its
	// natural clients are its devices and its classes are dataset.classes.
	Generated bool
	// DeviceSamples is a generated dataset's mean samples per device, for the memory
	// estimate.
	DeviceSamples float64
	// Install says where the data come from and how to get it, for the error that says a
	// dataset's files are missing.
	Install string
}

// DatasetCounts are a dataset's pooled sample and class counts.
type DatasetCounts struct {
	Samples, Classes int
}

var (
	datasetMu sync.RWMutex
	datasets  = map[string]DatasetDef{}
	// datasetOrder is the registration order, in which DatasetNames lists the datasets.
	datasetOrder []string
)

// RegisterDataset adds a dataset to the catalogue manifests are validated against. It
// panics when the name is empty or taken: both are programming errors, found when the
// registering package is initialized.
func RegisterDataset(d DatasetDef) {
	if d.Name == "" {
		panic("manifest.RegisterDataset: a dataset needs a name")
	}
	datasetMu.Lock()
	defer datasetMu.Unlock()
	if _, dup := datasets[d.Name]; dup {
		panic(fmt.Sprintf("manifest.RegisterDataset: dataset %q registered twice", d.Name))
	}
	datasets[d.Name] = d
	datasetOrder = append(datasetOrder, d.Name)
}

// LookupDataset returns the registered dataset called name.
func LookupDataset(name string) (DatasetDef, bool) {
	datasetMu.RLock()
	defer datasetMu.RUnlock()
	d, ok := datasets[name]
	return d, ok
}

// DatasetNames lists the registered datasets in the order they were registered.
func DatasetNames() []string {
	datasetMu.RLock()
	defer datasetMu.RUnlock()
	return append([]string(nil), datasetOrder...)
}

// DatasetTitle is the registered dataset's name as its papers write it (DatasetDef.Title),
// else name itself.
func DatasetTitle(name string) string {
	if d, ok := LookupDataset(name); ok && d.Title != "" {
		return d.Title
	}
	return name
}

// datasetDef is the registered def of a validated run's dataset (the zero def for a name
// validation would have refused).
func datasetDef(name string) DatasetDef {
	d, _ := LookupDataset(name)
	return d
}

// datasetsWhere lists, in registration order, the registered datasets for which keep holds.
func datasetsWhere(keep func(DatasetDef) bool) []string {
	var out []string
	for _, n := range DatasetNames() {
		if d, _ := LookupDataset(n); keep(d) {
			out = append(out, n)
		}
	}
	return out
}

// checkDatasetName is the `check:"dataset"` rule: the name must be registered. The message
// lists the registered names, with a did-you-mean for a typo.
func checkDatasetName(name string) string {
	if _, ok := LookupDataset(name); ok {
		return ""
	}
	names := DatasetNames()
	if len(names) == 0 {
		return fmt.Sprintf("%q is not a registered dataset: none is registered (stages/data registers them; import it)", name)
	}
	msg := fmt.Sprintf("%q is not one of %s", name, strings.Join(names, ", "))
	if near := nearest(name, names); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return msg
}

// FLBenchDataset returns the name under which FL-bench's constants.py keeps the
// normalization constants of a dataset (uglyghost+FedOBP src/utils/constants.py:183-220,
// DATA_MEAN and DATA_STD), and whether it keeps any (DatasetDef.FLBench and
// FLBenchVariants). FL-bench leaves the pixels of every dataset it has no constants for
// in [0, 1].
func FLBenchDataset(ds DatasetSpec) (string, bool) {
	d := datasetDef(ds.Name)
	if d.FLBench != "" {
		return d.FLBench, true
	}
	name, ok := d.FLBenchVariants[ds.Variant]
	return name, ok
}

// flbenchCovered lists what FL-bench has normalization constants for: the datasets it has
// them for whatever the variant, in registration order, then each dataset with only some
// variants covered, followed by those variants ("medmnist organamnist, organcmnist").
func flbenchCovered() string {
	items := datasetsWhere(func(d DatasetDef) bool { return d.FLBench != "" })
	for _, n := range datasetsWhere(func(d DatasetDef) bool { return d.FLBench == "" && len(d.FLBenchVariants) > 0 }) {
		var vs []string
		for v := range datasetDef(n).FLBenchVariants {
			vs = append(vs, v)
		}
		sort.Strings(vs)
		items = append(items, n+" "+strings.Join(vs, ", "))
	}
	return joinAnd(items)
}

// joinAnd joins items as a sentence does: "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// spelled writes a small count as a word ("five"), as messages do.
func spelled(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}
