package remote

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestResolveDirectoryAddresses(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, dir, err string }{
		{"file:///srv/fedpipe/cache", "/srv/fedpipe/cache", ""},
		{"file:///srv/fedpipe/cache/", "/srv/fedpipe/cache", ""},
		{"file://localhost/srv/x", "/srv/x", ""},
		{"/srv/fedpipe/../shared", "/srv/shared", ""},
		{"cache/remote", filepath.Join(wd, "cache/remote"), ""},
		{"./r", filepath.Join(wd, "r"), ""},
		{"file://nfs-server/srv/x", "", "three slashes"},
		{"file:relative/dir", "", "absolute path"},
		{"file:///srv/x?sync=1", "", "no query"},
		{"gs://bucket/x", "", "scheme must be s3 or file"},
	} {
		cfg, err := Resolve(c.in, mapEnv(nil))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrInvalid) {
				t.Errorf("Resolve(%q) = %+v, %v; want an ErrInvalid containing %q", c.in, cfg, err, c.err)
			}
			continue
		}
		if err != nil || cfg.Dir != c.dir {
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.in, cfg.Dir, err, c.dir)
			continue
		}
		if want := "file://" + c.dir; cfg.String() != want {
			t.Errorf("Resolve(%q).String() = %q, want %q", c.in, cfg.String(), want)
		}
	}
}

// Open creates a missing directory whose parent exists; it refuses a file, and a
// directory whose parent is missing (an unmounted filesystem?), as invalid input.
func TestOpenDirectory(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	r, err := Open(ctx, filepath.Join(base, "new"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(base, "new")); err != nil || !st.IsDir() {
		t.Fatalf("the remote's directory was not created: %v", err)
	}
	if r.String() != "file://"+filepath.Join(base, "new") {
		t.Fatalf("String = %q", r)
	}
	if entries, _ := os.ReadDir(filepath.Join(base, "new")); len(entries) != 0 {
		t.Fatalf("Open left files behind: %v", entries)
	}
	file := filepath.Join(base, "plain")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, addr := range []string{file, "file://" + file, filepath.Join(base, "a", "b")} {
		if _, err := Open(ctx, addr, Options{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("Open(%q) = %v, want ErrInvalid", addr, err)
		}
	}
	if err == nil && os.Getuid() != 0 {
		ro := filepath.Join(base, "ro")
		os.Mkdir(ro, 0o555)
		if _, err := Open(ctx, ro, Options{}); err == nil || errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not writable") {
			t.Errorf("Open of a read-only directory: %v, want a failure saying it is not writable", err)
		}
	}
}

// Readers of a name that is rewritten concurrently always see one whole version (put
// renames a complete temporary file over the name), and writers leave no temporary file.
func TestDirectoryPutIsAtomicForReaders(t *testing.T) {
	r, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	versions := [][]byte{bytes.Repeat([]byte{'a'}, 1<<20), bytes.Repeat([]byte{'b'}, 3<<20)}
	if err := r.put(ctx, "ac/x", versions[0], ""); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 40 {
			if err := r.put(ctx, "ac/x", versions[i%2], ""); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 200 {
		b, found, err := r.get(ctx, "ac/x")
		if err != nil || !found || !(bytes.Equal(b, versions[0]) || bytes.Equal(b, versions[1])) {
			t.Fatalf("a reader saw %d bytes (found %v, %v): a partial object", len(b), found, err)
		}
	}
	wg.Wait()
	entries, _ := os.ReadDir(filepath.Join(r.cfg.Dir, "ac"))
	if len(entries) != 1 || entries[0].Name() != "x" {
		t.Fatalf("the folder holds %v, want only x", entries)
	}
}
