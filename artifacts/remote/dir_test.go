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

	"github.com/fedpipe/fedpipe/artifacts/remote/dirremote"
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
		if err != nil || cfg.loc.(dirremote.Location).Dir != c.dir || !cfg.Workers().SharedPath {
			t.Errorf("Resolve(%q) = %+v, %v; want directory %q, shared by workers as a path", c.in, cfg, err, c.dir)
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
	root := t.TempDir()
	r, err := Open(context.Background(), root, Options{})
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
	entries, _ := os.ReadDir(filepath.Join(root, "ac"))
	if len(entries) != 1 || entries[0].Name() != "x" {
		t.Fatalf("the folder holds %v, want only x", entries)
	}
}

// A pushed entry records its outputs' sizes; a blob object larger than its recorded size
// is refused before it is read (a miss naming the file), although it would be within the
// bound of a blob of unknown size; a read-only directory remote opens and serves it, and
// refuses writes.
func TestFetchBoundsBlobsBySizeTheEntryRecords(t *testing.T) {
	b := dirBackend(t)
	r, _ := b.open(t, Options{})
	ctx := context.Background()
	src := openStore(t)
	key, a := putAction(t, src, 3)
	if _, err := r.PushAction(ctx, src, key, a); err != nil {
		t.Fatal(err)
	}
	ro, _ := b.open(t, Options{ReadOnly: true})
	if _, ok, _, err := ro.FetchAction(ctx, openStore(t), key); err != nil || !ok {
		t.Fatalf("read-only fetch: %v %v", ok, err)
	}
	if err := ro.DeleteCheckpoint(ctx, key); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a delete through a read-only remote: %v", err)
	}
	obj := b.objectPath("cas/" + a.Outputs["metrics"].String())
	size, err := src.Size(a.Outputs["metrics"])
	if want := int64(len("round,acc\n1,0.5\n\x03")); err != nil || size != want {
		t.Fatalf("Size of the metrics blob: %d, %v; want %d", size, err, want)
	}
	if err := os.Truncate(obj, size+1); err != nil {
		t.Fatal(err)
	}
	_, ok, _, err := ro.FetchAction(ctx, openStore(t), key)
	if ok || err == nil || !strings.Contains(err.Error(), obj) || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("an object one byte over its recorded size: ok=%v %v, want a miss naming %s", ok, err, obj)
	}
}
