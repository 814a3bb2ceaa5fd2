package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/fedpipe/fedpipe/artifacts/osfile"
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

// cacheKey names everything of a spec that changes the loaded data: a generated
// dataset's parameters, or where a read one's files are and how they are read.
func cacheKey(spec manifest.DatasetSpec) string {
	if byName[spec.Name].def.Generated {
		return fmt.Sprintf("%s|%v|%v|%d|%d|%d", spec.Name, spec.Alpha, spec.Beta, spec.Devices, spec.Features, spec.Classes)
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
	e, ok := byName[spec.Name]
	src := e.src
	if !ok {
		return nil, fmt.Errorf("dataset %s: no loader in this build: %w", spec.Name, manifest.ErrInvalid)
	}
	var d *Dataset
	var err error
	if src.generate != nil {
		d = src.generate(spec)
	} else {
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

// source says where one dataset's files live, how to recognize them and how to read them,
// or how a generated dataset is generated.
type source struct {
	// generate makes a generated dataset (manifest.DatasetDef.Generated) from the spec's
	// parameters; the other fields are then unused.
	generate func(spec manifest.DatasetSpec) *Dataset
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
	if st.Mode().IsRegular() {
		return nil
	}
	return &UnusableFileError{Path: p, What: osfile.Kind(st.Mode())}
}

func fixed(s string) func(manifest.DatasetSpec) string {
	return func(manifest.DatasetSpec) string { return s }
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
