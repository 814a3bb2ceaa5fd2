package manifest

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/model/arch"
)

// datasetInfo is what validation knows of a dataset before any file is read: whether its
// samples are images, whether it has natural clients or domains, its variants, and its
// pooled sample and class counts (0: unknown until loaded).
type datasetInfo struct {
	image   bool
	natural bool
	domains int
	// variants maps each allowed dataset.variant to its sample and class counts; "" is
	// the default. A nil map allows no variant.
	variants map[string][2]int
	// needVariant: the dataset has no default member.
	needVariant bool
	// resize: image_size applies (image folders).
	resize bool
}

// Counts of the released files (all official splits pooled).
var datasetInfos = map[string]datasetInfo{
	"fmnist":    {image: true, variants: map[string][2]int{"": {70000, 10}}},
	"mnist":     {image: true, variants: map[string][2]int{"": {70000, 10}}},
	"synthetic": {natural: true},
	"emnist": {image: true, variants: map[string][2]int{"": {814255, 62}, "byclass": {814255, 62}, "bymerge": {814255, 47},
		"balanced": {131600, 47}, "digits": {280000, 10}, "letters": {145600, 26}, "mnist": {70000, 10}}},
	"cifar10":  {image: true, variants: map[string][2]int{"": {60000, 10}}},
	"cifar100": {image: true, variants: map[string][2]int{"": {60000, 100}}},
	"cifar10c": {image: true, needVariant: true, variants: cifar10cVariants()},
	"svhn":     {image: true, variants: map[string][2]int{"": {99289, 10}}},
	"medmnist": {image: true, needVariant: true, variants: map[string][2]int{"pathmnist": {107180, 9}, "octmnist": {109309, 4},
		"pneumoniamnist": {5856, 2}, "dermamnist": {10015, 7}, "retinamnist": {1600, 5}, "breastmnist": {780, 2},
		"bloodmnist": {17092, 8}, "tissuemnist": {236386, 8}, "organamnist": {58850, 11}, "organcmnist": {23660, 11},
		"organsmnist": {25221, 11}}},
	"officehome":   {image: true, domains: 4, resize: true, variants: map[string][2]int{"": {15588, 65}}},
	"miniimagenet": {image: true, resize: true, variants: map[string][2]int{"": {60000, 100}}},
	"har":          {natural: true, variants: map[string][2]int{"": {10299, 6}}},
	"femnist":      {image: true, natural: true, variants: map[string][2]int{"": {805263, 62}}},
}

// cifar10cVariants lists CIFAR-10-C's corruption files: 10,000 images per severity.
func cifar10cVariants() map[string][2]int {
	m := map[string][2]int{}
	for _, c := range CIFAR10CNames {
		m[c] = [2]int{10000, 10}
	}
	return m
}

func sortedVariants(m map[string][2]int) string {
	var out []string
	for v := range m {
		if v != "" {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// checkData checks a run's dataset, model and partition against what is known of the
// dataset; it sets the model's default architecture and the clients of natural and domain
// partitions when the manifest leaves them out.
func (m *Manifest) checkData(r *Run) error {
	ds, p := r.Dataset, &r.Partition
	info := datasetInfos[ds.Name]
	if r.Model.Arch == "" {
		r.Model.Arch = arch.MLP
		if info.image {
			r.Model.Arch = arch.CNN4
		}
	}
	counts, known := info.variants[ds.Variant]
	switch {
	case ds.Variant != "" && info.variants == nil || ds.Variant != "" && len(info.variants) == 1 && !known:
		return m.ErrAt("dataset.variant", "%s has no variants: remove dataset.variant", ds.Name)
	case !known && ds.Variant == "" && info.needVariant:
		return m.ErrAt("dataset.name", "%s needs dataset.variant: one of %s", ds.Name, sortedVariants(info.variants))
	case !known && info.variants != nil && ds.Name != "medmnist":
		msg := fmt.Sprintf("unknown %s variant %q (known: %s)", ds.Name, ds.Variant, sortedVariants(info.variants))
		return m.ErrAt("dataset.variant", "%s", msg)
	}
	if ds.Severity != 0 && ds.Name != "cifar10c" {
		return m.ErrAt("dataset.severity", "severity applies to cifar10c only")
	}
	if ds.Severity > 5 {
		return m.ErrAt("dataset.severity", "severity %d outside 1..5 (0: all five pooled)", ds.Severity)
	}
	if ds.ImageSize != 0 && !info.resize {
		return m.ErrAt("dataset.image_size", "%s images have a fixed size; image_size applies to officehome and miniimagenet", ds.Name)
	}
	if ds.Normalize != "" && !info.image {
		return m.ErrAt("dataset.normalize", "%s samples are not images: remove dataset.normalize", ds.Name)
	}
	if _, ok := FLBenchDataset(ds); ds.Normalize == "flbench" && !ok {
		what := ds.Name
		if ds.Variant != "" {
			what += " " + ds.Variant
		}
		return m.ErrAt("dataset.normalize", "FL-bench has no normalization constants for %s (it has them for fmnist, mnist, emnist, cifar10, cifar100, svhn, femnist and medmnist organamnist, organcmnist): use dataset, imagenet or none", what)
	}
	if !info.image && arch.NeedsImage(r.Model.Arch) {
		what := fmt.Sprintf("%d flat features", ds.Features)
		if ds.Name == "har" {
			what = "561 flat features"
		}
		return m.ErrAt("model.arch", "%s needs image data; %s has %s: use mlp or logreg", r.Model.Arch, ds.Name, what)
	}
	if !info.image && len(r.Train.Augment) > 0 {
		return m.ErrAt("train.augment", "crop and flip need image data; %s has flat features: remove train.augment", ds.Name)
	}
	if !info.image && len(m.Shift.Corruptions) > 0 {
		return m.ErrAt("shift.corruptions", "corruptions need image data; %s has flat features (use shift.degrees)", ds.Name)
	}
	if len(m.Shift.CIFAR10C) > 0 && ds.Name != "cifar10" {
		return m.ErrAt("shift.cifar10c", "the real CIFAR-10-C corruptions replace CIFAR-10 test images: they need dataset cifar10, not %s (use shift.corruptions for corruptions generated in Go)", ds.Name)
	}
	classes := counts[1]
	if ds.Name == "synthetic" {
		classes = ds.Classes
	}
	switch p.Scheme {
	case "natural":
		if !info.natural {
			return m.ErrAt("partition.scheme", "%s has no natural clients (natural: synthetic, femnist, har): use dirichlet, shards, iid or pathological", ds.Name)
		}
		if ds.Name == "synthetic" {
			if _, set := m.Pos["partition.clients"]; set && p.Clients != ds.Devices {
				return m.ErrAt("partition.clients", "natural partition of synthetic gives one client per device: clients (%d) must equal dataset.devices (%d)", p.Clients, ds.Devices)
			}
			p.Clients = ds.Devices
		} else if _, set := m.Pos["partition.clients"]; !set {
			p.Clients = 0 // every writer or subject with at least min_samples samples
		}
	case "domain":
		if info.domains == 0 {
			return m.ErrAt("partition.scheme", "%s has no domains (domain: officehome)", ds.Name)
		}
		if _, set := m.Pos["partition.clients"]; set && p.Clients != info.domains {
			return m.ErrAt("partition.clients", "the domain partition gives one client per domain: clients (%d) must equal the %d domains of %s", p.Clients, info.domains, ds.Name)
		}
		p.Clients = info.domains
	case "pathological":
		if classes > 0 && p.ClassesPerClient > classes {
			return m.ErrAt("partition.classes_per_client", "%d classes per client, but %s has %d classes", p.ClassesPerClient, ds.Name, classes)
		}
		if p.QuantitySkew > 0 && p.Clients < 2 {
			return m.ErrAt("partition.quantity_skew", "quantity skew splits the clients into two groups: it needs at least 2 clients")
		}
	}
	n := counts[0]
	if ds.Name == "cifar10c" && ds.Severity == 0 {
		n *= 5
	}
	if n == 0 {
		return nil
	}
	if ds.Fraction > 0 {
		n = max(int(math.Round(ds.Fraction*float64(n))), 1)
	}
	if ds.MaxSamples > 0 {
		n = min(n, ds.MaxSamples)
	}
	if p.Clients > n/2 {
		return m.ErrAt("partition.clients", "%d clients for %d samples: each client needs at least 2 (one train, one test)", p.Clients, n)
	}
	if p.Scheme == "dirichlet" && p.Clients*p.MinSamples > n {
		return m.ErrAt("partition.min_samples", "%d clients × min_samples %d exceeds the %d samples", p.Clients, p.MinSamples, n)
	}
	if p.Scheme == "shards" && p.Clients*p.SamplesPerClient > n {
		return m.ErrAt("partition.samples_per_client", "%d clients × %d samples exceeds the %d samples", p.Clients, p.SamplesPerClient, n)
	}
	return nil
}

// FLBenchDataset returns the name under which FL-bench's constants.py keeps the
// normalization constants of a dataset (uglyghost+FedOBP src/utils/constants.py:183-220,
// DATA_MEAN and DATA_STD), and whether it keeps any. FL-bench's MedMNIST-A and -C are
// OrganAMNIST and OrganCMNIST (11 organ classes each); it has no entry under its
// medmnistS (OrganSMNIST), so it leaves those pixels in [0, 1], as it does for every
// dataset it has no constants for.
func FLBenchDataset(ds DatasetSpec) (string, bool) {
	switch ds.Name {
	case "fmnist", "mnist", "emnist", "cifar10", "cifar100", "svhn", "femnist":
		return ds.Name, true
	case "medmnist":
		switch ds.Variant {
		case "organamnist":
			return "medmnistA", true
		case "organcmnist":
			return "medmnistC", true
		}
	}
	return "", false
}
