package manifest

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/model/arch"
)

// sortedVariants lists a dataset's named variants, sorted.
func sortedVariants(m map[string]DatasetCounts) string {
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
	info := datasetDef(ds.Name)
	if r.Model.Arch == "" {
		r.Model.Arch = arch.MLP
		if info.Image {
			r.Model.Arch = arch.CNN4
		}
	}
	counts, known := info.Variants[ds.Variant]
	switch {
	case ds.Variant != "" && info.Variants == nil || ds.Variant != "" && len(info.Variants) == 1 && !known:
		return m.ErrAt("dataset.variant", "%s has no variants: remove dataset.variant", ds.Name)
	case !known && ds.Variant == "" && info.NeedVariant:
		return m.ErrAt("dataset.name", "%s needs dataset.variant: one of %s", ds.Name, sortedVariants(info.Variants))
	case !known && info.Variants != nil && !info.OpenVariants:
		msg := fmt.Sprintf("unknown %s variant %q (known: %s)", ds.Name, ds.Variant, sortedVariants(info.Variants))
		return m.ErrAt("dataset.variant", "%s", msg)
	}
	if ds.Severity != 0 && info.Severities == 0 {
		return m.ErrAt("dataset.severity", "severity applies to %s only", joinAnd(datasetsWhere(func(d DatasetDef) bool { return d.Severities > 0 })))
	}
	if ds.Severity > info.Severities {
		return m.ErrAt("dataset.severity", "severity %d outside 1..%d (0: all %s pooled)", ds.Severity, info.Severities, spelled(info.Severities))
	}
	if ds.ImageSize != 0 && !info.Resize {
		return m.ErrAt("dataset.image_size", "%s images have a fixed size; image_size applies to %s", ds.Name, joinAnd(datasetsWhere(func(d DatasetDef) bool { return d.Resize })))
	}
	if ds.Normalize != "" && !info.Image {
		return m.ErrAt("dataset.normalize", "%s samples are not images: remove dataset.normalize", ds.Name)
	}
	if _, ok := FLBenchDataset(ds); ds.Normalize == "flbench" && !ok {
		what := ds.Name
		if ds.Variant != "" {
			what += " " + ds.Variant
		}
		return m.ErrAt("dataset.normalize", "FL-bench has no normalization constants for %s (it has them for %s): use dataset, imagenet or none", what, flbenchCovered())
	}
	if !info.Image && arch.NeedsImage(r.Model.Arch) {
		dim, _, _ := sampleDims(r)
		return m.ErrAt("model.arch", "%s needs image data; %s has %d flat features: use mlp or logreg", r.Model.Arch, ds.Name, int(dim))
	}
	if !info.Image && len(r.Train.Augment) > 0 {
		return m.ErrAt("train.augment", "crop and flip need image data; %s has flat features: remove train.augment", ds.Name)
	}
	if !info.Image && len(m.Shift.Corruptions) > 0 {
		return m.ErrAt("shift.corruptions", "corruptions need image data; %s has flat features (use shift.degrees)", ds.Name)
	}
	if len(m.Shift.CIFAR10C) > 0 && !info.RealCorruptions {
		return m.ErrAt("shift.cifar10c", "the real CIFAR-10-C corruptions replace CIFAR-10 test images: they need dataset %s, not %s (use shift.corruptions for corruptions generated in Go)",
			strings.Join(datasetsWhere(func(d DatasetDef) bool { return d.RealCorruptions }), " or "), ds.Name)
	}
	classes := counts.Classes
	if info.Generated {
		classes = ds.Classes
	}
	switch p.Scheme {
	case "natural":
		if !info.Natural {
			return m.ErrAt("partition.scheme", "%s has no natural clients (natural: %s): use dirichlet, shards, iid or pathological", ds.Name, naturalDatasets())
		}
		if info.Generated {
			if _, set := m.Pos["partition.clients"]; set && p.Clients != ds.Devices {
				return m.ErrAt("partition.clients", "natural partition of %s gives one client per device: clients (%d) must equal dataset.devices (%d)", ds.Name, p.Clients, ds.Devices)
			}
			p.Clients = ds.Devices
		} else if _, set := m.Pos["partition.clients"]; !set {
			p.Clients = 0 // every writer or subject with at least min_samples samples
		}
	case "domain":
		if info.Domains == 0 {
			return m.ErrAt("partition.scheme", "%s has no domains (domain: %s)", ds.Name, strings.Join(datasetsWhere(func(d DatasetDef) bool { return d.Domains > 0 }), ", "))
		}
		if _, set := m.Pos["partition.clients"]; set && p.Clients != info.Domains {
			return m.ErrAt("partition.clients", "the domain partition gives one client per domain: clients (%d) must equal the %d domains of %s", p.Clients, info.Domains, ds.Name)
		}
		p.Clients = info.Domains
	case "pathological":
		if classes > 0 && p.ClassesPerClient > classes {
			return m.ErrAt("partition.classes_per_client", "%d classes per client, but %s has %d classes", p.ClassesPerClient, ds.Name, classes)
		}
		if p.QuantitySkew > 0 && p.Clients < 2 {
			return m.ErrAt("partition.quantity_skew", "quantity skew splits the clients into two groups: it needs at least 2 clients")
		}
	}
	n := pooledSamples(info, ds)
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

// pooledSamples is the pooled sample count of the run's dataset as known before loading (0:
// unknown): its variant's count, times its severities when dataset.severity pools them.
func pooledSamples(info DatasetDef, ds DatasetSpec) int {
	n := info.Variants[ds.Variant].Samples
	if info.Severities > 0 && ds.Severity == 0 {
		n *= info.Severities
	}
	return n
}

// naturalDatasets lists the datasets with natural clients: the generated ones first, then
// the others by name.
func naturalDatasets() string {
	names := datasetsWhere(func(d DatasetDef) bool { return d.Natural })
	sort.SliceStable(names, func(i, j int) bool {
		gi, gj := datasetDef(names[i]).Generated, datasetDef(names[j]).Generated
		if gi != gj {
			return gi
		}
		return names[i] < names[j]
	})
	return strings.Join(names, ", ")
}
