package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A manifest path that is empty, a directory or missing is refused with what to do; a
// missing one suggests the manifest beside it with the closest name.
func TestReadManifestFileRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "table1.yaml"), []byte("name: t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"":                                "empty manifest path",
		dir:                               "is a directory, not a regular file",
		filepath.Join(dir, "tabel1.yaml"): "did you mean " + filepath.Join(dir, "table1.yaml") + "?",
	} {
		if _, err := readManifestFile(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", path, err, want)
		}
	}
	b, err := readManifestFile(filepath.Join(dir, "table1.yaml"))
	if err != nil || string(b) != "name: t\n" {
		t.Errorf("read %q, %v", b, err)
	}
}
