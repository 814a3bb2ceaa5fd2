package manifest

import (
	"errors"
	"strings"
	"testing"
)

// Cross-field dataset checks fail with an InputError naming the field; the messages that
// list datasets, built from the registered defs, read as they did when they were written
// out by hand.
func TestDatasetCrossFieldChecks(t *testing.T) {
	cases := []struct {
		name, data, part, model, field, want string
	}{
		{"natural on cifar10", "{name: cifar10}", "{scheme: natural}", "", "partition.scheme", "cifar10 has no natural clients (natural: synthetic, femnist, har): use dirichlet, shards, iid or pathological"},
		{"domain on cifar10", "{name: cifar10}", "{scheme: domain}", "", "partition.scheme", "cifar10 has no domains (domain: officehome)"},
		{"domain clients", "{name: officehome}", "{scheme: domain, clients: 3}", "", "partition.clients", "must equal the 4 domains"},
		{"cnn on har", "{name: har}", "{scheme: natural}", "{arch: resnet18}", "model.arch", "resnet18 needs image data; har has 561 flat features"},
		{"too many classes", "{name: cifar10}", "{scheme: pathological, classes_per_client: 11}", "", "partition.classes_per_client", "but cifar10 has 10 classes"},
		{"cifar100 clients", "{name: cifar100, fraction: 0.001}", "{clients: 40}", "", "partition.clients", "40 clients for 60 samples"},
		{"svhn min_samples", "{name: svhn}", "{clients: 1000, min_samples: 100}", "", "partition.min_samples", "exceeds the 99289 samples"},
		{"cifar10c variant", "{name: cifar10c}", "{}", "", "dataset.name", "cifar10c needs dataset.variant"},
		{"cifar10c unknown", "{name: cifar10c, variant: fogg}", "{}", "", "dataset.variant", `unknown cifar10c variant "fogg"`},
		{"emnist split", "{name: emnist, variant: lowercase}", "{}", "", "dataset.variant", "unknown emnist variant"},
		{"variant on cifar10", "{name: cifar10, variant: x}", "{}", "", "dataset.variant", "cifar10 has no variants"},
		{"severity on svhn", "{name: svhn, severity: 2}", "{}", "", "dataset.severity", "severity applies to cifar10c only"},
		{"severity 6", "{name: cifar10c, variant: fog, severity: 6}", "{}", "", "dataset.severity", "severity 6 outside 1..5 (0: all five pooled)"},
		{"image_size on mnist", "{name: mnist, image_size: 64}", "{}", "", "dataset.image_size", "mnist images have a fixed size; image_size applies to officehome and miniimagenet"},
		{"cnn on synthetic", "{name: synthetic, features: 60}", "{scheme: natural}", "{arch: cnn4}", "model.arch", "cnn4 needs image data; synthetic has 60 flat features: use mlp or logreg"},
		{"synthetic clients", "{name: synthetic, devices: 30}", "{scheme: natural, clients: 5}", "", "partition.clients",
			"natural partition of synthetic gives one client per device: clients (5) must equal dataset.devices (30)"},
		{"flbench on cifar10c", "{name: cifar10c, variant: fog, normalize: flbench}", "{}", "", "dataset.normalize",
			"FL-bench has no normalization constants for cifar10c fog (it has them for fmnist, mnist, emnist, cifar10, cifar100, svhn, femnist and medmnist organamnist, organcmnist): use dataset, imagenet or none"},
		{"normalize on har", "{name: har, normalize: none}", "{scheme: natural}", "", "dataset.normalize", "not images"},
	}
	for _, c := range cases {
		y := "name: t\ndataset: " + c.data + "\npartition: " + c.part + "\nmethods: [{name: fedavg}]\n"
		if c.model != "" {
			y += "model: " + c.model + "\n"
		}
		_, err := ParseManifest("m.yaml", []byte(y))
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want field %s and %q", c.name, err, c.field, c.want)
		}
	}
}

func TestDatasetDefaults(t *testing.T) {
	for _, c := range []struct {
		data, part, arch string
		clients          int
	}{
		{"{name: har}", "{scheme: natural}", "mlp", 0},
		{"{name: femnist}", "{scheme: natural, clients: 500}", "cnn4", 500},
		{"{name: officehome}", "{scheme: domain}", "cnn4", 4},
		{"{name: medmnist, variant: organamnist}", "{scheme: pathological, classes_per_client: 2, quantity_skew: 0.9, clients: 100}", "cnn4", 100},
		{"{name: cifar10c, variant: fog, severity: 5}", "{clients: 10}", "cnn4", 10},
	} {
		m, err := ParseManifest("m.yaml", []byte("name: t\ndataset: "+c.data+"\npartition: "+c.part+"\nmethods: [{name: fedavg}]\n"))
		if err != nil {
			t.Errorf("%s %s: %v", c.data, c.part, err)
			continue
		}
		runs, _ := m.Expand()
		if runs[0].Model.Arch != c.arch || runs[0].Partition.Clients != c.clients {
			t.Errorf("%s %s: arch %s clients %d, want %s %d", c.data, c.part, runs[0].Model.Arch, runs[0].Partition.Clients, c.arch, c.clients)
		}
	}
}
