// Package dirremote is the directory kind of remote: its objects are files under a
// directory, which may be on a filesystem several machines share (NFS, Lustre, GPFS). Its
// addresses are file:///DIR or a plain path, absolute or relative to the working directory.
package dirremote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
)

func init() {
	backend.Register(backend.Kind{
		Scheme:  "file",
		Want:    "file:///DIR or a directory path",
		Paths:   true,
		Workers: backend.Workers{SharedPath: true},
		Parse: func(address string, _ func(string) string) (backend.Location, error) {
			dir, err := ParseDir(address)
			if err != nil {
				return nil, err
			}
			return Location{Dir: dir}, nil
		},
	})
}

// Location is a directory remote's resolved address.
type Location struct {
	// Dir is the absolute, cleaned directory.
	Dir string
}

// String is the remote's file URL, file:///DIR.
func (cfg Location) String() string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(cfg.Dir)}).String()
}

// Prefix is empty: the objects are named from the directory itself.
func (Location) Prefix() string { return "" }

// Secrets is empty: a directory needs no credentials.
func (Location) Secrets() []string { return nil }

// IsAddress reports whether address names a directory: file:… or no scheme at all.
func IsAddress(address string) bool {
	return strings.HasPrefix(address, "file:") || !strings.Contains(address, "://")
}

// ParseDir returns the absolute, cleaned directory that a directory remote's address
// names: file:///abs/dir (file://localhost/abs/dir is accepted too), or a plain path,
// absolute or relative to the working directory. A file URL with another host, a
// relative file: URL, or one with a query or fragment is invalid.
func ParseDir(address string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w: %q: %s (want file:///DIR or a directory path)", backend.ErrInvalid, backend.RedactURL(address), why)
	}
	path := address
	if strings.HasPrefix(address, "file:") {
		u, err := url.Parse(address)
		if err != nil {
			return bad("not a URL")
		}
		if u.User != nil || (u.Host != "" && u.Host != "localhost") {
			return bad("a file URL names a directory of this machine: file:///DIR (three slashes)")
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return bad("no query or fragment is accepted")
		}
		if u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
			return bad("a file URL needs an absolute path; give a relative directory without file:")
		}
		path = filepath.FromSlash(u.Path)
	}
	if strings.TrimSpace(path) == "" {
		return bad("empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return bad(err.Error())
	}
	return abs, nil
}

// Open checks that the directory is one (creating it when only its last element is
// missing) that this process can write to; with readOnly, a directory this process can
// list, never written (a reviewer's read-only checkout of kept results).
func (cfg Location) Open(_ context.Context, readOnly bool) (backend.Objects, error) {
	dir := cfg.Dir
	st, err := os.Stat(dir)
	if readOnly {
		if err == nil && st.IsDir() {
			if _, err = os.ReadDir(dir); err == nil {
				return &dirObjects{root: dir, readOnly: true}, nil
			}
			return nil, fmt.Errorf("remote %s: the directory cannot be read: %w", cfg, err)
		}
		if err == nil || missing(err) {
			return nil, fmt.Errorf("%w: remote %s: %s is not a directory", backend.ErrInvalid, cfg, dir)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		parent := filepath.Dir(dir)
		if pst, perr := os.Stat(parent); perr != nil || !pst.IsDir() {
			return nil, fmt.Errorf("%w: remote %s: neither the directory nor its parent %s exists (create it, or check that the shared filesystem is mounted)", backend.ErrInvalid, cfg, parent)
		}
		if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("remote %s: create the directory: %w", cfg, err)
		}
	case err != nil:
		return nil, fmt.Errorf("remote %s: %w", cfg, err)
	case !st.IsDir():
		return nil, fmt.Errorf("%w: remote %s: %s is a file, not a directory", backend.ErrInvalid, cfg, dir)
	}
	probe, err := os.CreateTemp(dir, tmpPrefix+"probe-")
	if err != nil {
		return nil, fmt.Errorf("remote %s: the directory is not writable: %w", cfg, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return &dirObjects{root: dir}, nil
}
