package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMalformedCorpus runs every manifest in testdata/malformed. Each file begins with
// "# exit: N" and one or more "# want: TEXT" lines: the run must exit with N, its error
// output must contain every TEXT, and no store may be created. "CORPUS" in a manifest
// stands for the corpus directory (for dataset paths to corrupt files kept there).
func TestMalformedCorpus(t *testing.T) {
	dir, err := filepath.Abs("testdata/malformed")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("corpus holds %d inputs, want at least 40", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			exit, wants := -1, []string{}
			for _, line := range strings.Split(string(raw), "\n") {
				if v, ok := strings.CutPrefix(line, "# exit: "); ok {
					exit, _ = strconv.Atoi(v)
				}
				if v, ok := strings.CutPrefix(line, "# want: "); ok {
					wants = append(wants, v)
				}
			}
			if exit < 0 || len(wants) == 0 {
				t.Fatal("corpus file lacks its # exit: and # want: lines")
			}
			tmp := t.TempDir()
			m := filepath.Join(tmp, filepath.Base(f))
			if err := os.WriteFile(m, []byte(strings.ReplaceAll(string(raw), "CORPUS", dir)), 0o644); err != nil {
				t.Fatal(err)
			}
			store := filepath.Join(tmp, "store")
			code, _, errs := fedpipe(t, "run", m, "--store", store)
			if code != exit {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exit, errs)
			}
			for _, w := range wants {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if !strings.Contains(errs, m) {
				t.Errorf("the message does not name the manifest file:\n%s", errs)
			}
			if _, err := os.Stat(store); !os.IsNotExist(err) {
				t.Error("invalid input created the store")
			}
		})
	}
}
