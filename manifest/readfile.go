package manifest

// Reading a manifest file: standard input or a regular file, bounded in size, with a
// did-you-mean for a mistyped name.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fedpipe/fedpipe/artifacts/osfile"
)

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
			return nil, &InputError{File: path, Msg: fmt.Sprintf("is %s, not a regular file: a manifest is a YAML file; use - to read standard input", osfile.Kind(fi.Mode()))}
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
