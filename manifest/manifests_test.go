package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// agreedMethods are method names the manifests may use before their implementation is
// merged (the baselines branch). Once Methods defines a name, it is checked like any other.
var agreedMethods = []string{"lotteryfl", "fedala", "fedpac", "pfedfda", "flute", "floco", "dmpfl", "dmpfl_plus", "feddst"}

// TestEveryManifestParses loads and expands every manifest in manifests/: the published
// tables' manifests must stay valid as the schema and the methods change.
func TestEveryManifestParses(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "manifests", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d manifests in ../manifests, want the published tables' and more", len(files))
	}
	var pending []string
	for _, f := range files {
		m, err := LoadManifest(f)
		if err == nil {
			var runs []Run
			if runs, err = m.Expand(); err == nil && len(runs) == 0 {
				t.Errorf("%s: expands to no runs", f)
			}
		}
		if err == nil {
			continue
		}
		if name := unknownAgreedMethod(err.Error()); name != "" {
			pending = append(pending, filepath.Base(f)+" ("+name+")")
			// Everything else in the manifest is checked now: without those methods.
			if err := expandWithout(f); err != nil {
				t.Errorf("%s, without the methods not merged yet: %v", f, err)
			}
			continue
		}
		t.Errorf("%v", err)
	}
	if len(pending) > 0 {
		t.Logf("%d manifests name methods this branch does not implement yet: %s", len(pending), strings.Join(pending, ", "))
	}
}

// expandWithout parses and expands the manifest in file f with the agreed-but-undefined
// methods and the expectations naming them removed.
func expandWithout(f string) error {
	b, err := os.ReadFile(f)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return err
	}
	field := func(n *yaml.Node, key string) string {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1].Value
			}
		}
		return ""
	}
	undefined := func(name string) bool {
		_, ok := Methods[name]
		return !ok && slices.Contains(agreedMethods, name)
	}
	removed := map[string]bool{} // labels of the removed methods
	root := doc.Content[0]
	for _, key := range []string{"methods", "expect"} {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value != key {
				continue
			}
			list := root.Content[i+1]
			list.Content = slices.DeleteFunc(list.Content, func(n *yaml.Node) bool {
				if key == "expect" {
					return removed[field(n, "method")] || removed[field(n, "above")]
				}
				method := field(n, "method")
				if method == "" {
					method = field(n, "name")
				}
				if undefined(method) {
					removed[field(n, "name")] = true
					return true
				}
				return false
			})
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return err
	}
	m, err := ParseManifest(f, out)
	if err != nil {
		return err
	}
	_, err = m.Expand()
	return err
}

// unknownAgreedMethod returns the agreed-but-undefined method an error complains about.
func unknownAgreedMethod(msg string) string {
	for _, name := range agreedMethods {
		if _, ok := Methods[name]; ok {
			continue
		}
		if strings.Contains(msg, `"`+name+`"`) && strings.Contains(msg, "method") {
			return name
		}
	}
	return ""
}

// The manifests' expectations are the numbers users compare against: every one names a
// method of its manifest, a source, and a published value or a claim.
func TestManifestExpectationsAreComplete(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "manifests", "*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseManifest(f, b)
		if err != nil {
			continue // reported by TestEveryManifestParses
		}
		var names []string
		for _, ms := range m.Methods {
			names = append(names, ms.Name)
		}
		for i, e := range m.Expect {
			if !slices.Contains(names, e.Method) || (e.Above != "" && !slices.Contains(names, e.Above)) {
				t.Errorf("%s: expect[%d] names a method the manifest lacks: %q above %q", f, i, e.Method, e.Above)
			}
			_, published := m.Pos[fmt.Sprintf("expect[%d].published", i)]
			if e.Source == "" || (e.Above == "" && !published) {
				t.Errorf("%s: expect[%d] (%s) has no source or no published value", f, i, e.Method)
			}
		}
	}
}

// seedsDir finds the source papers' texts: $FEDPIPE_SEEDS, else ../shared/seeds beside the
// repository (where developers and CI have them).
func seedsDir() string {
	for _, d := range []string{os.Getenv("FEDPIPE_SEEDS"), filepath.Join("..", "..", "shared", "seeds"), "/work/shared/seeds"} {
		if d == "" {
			continue
		}
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return ""
}

// seedOf maps an expectation's source to the seed file it quotes.
var seedOf = map[string]string{"FedSelect workshop": "002_", "FedSelect Table": "000_", "FedOBP Table": "003_"}

// Every published number a manifest quotes from a paper occurs in that paper's text, as
// the paper prints it (two decimals): a typo in a transcription fails here.
func TestPublishedNumbersOccurInTheSeeds(t *testing.T) {
	dir := seedsDir()
	if dir == "" {
		t.Skip("the seed texts are not here (set FEDPIPE_SEEDS to their folder)")
	}
	texts := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		texts[e.Name()[:4]] = string(b)
	}
	files, _ := filepath.Glob(filepath.Join("..", "manifests", "*.yaml"))
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Expect []struct {
				Method    string   `yaml:"method"`
				Published *float64 `yaml:"published"`
				Std       float64  `yaml:"std"`
				Source    string   `yaml:"source"`
			} `yaml:"expect"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, e := range doc.Expect {
			prefix := ""
			for src, p := range seedOf {
				if strings.HasPrefix(e.Source, src) {
					prefix = p
				}
			}
			if prefix == "" || e.Published == nil {
				continue
			}
			text := texts[prefix]
			if text == "" {
				t.Fatalf("no seed %s* in %s", prefix, dir)
			}
			want := fmt.Sprintf("%.2f", *e.Published)
			if e.Std > 0 || strings.HasPrefix(e.Source, "FedOBP Table 1,") || strings.HasPrefix(e.Source, "FedOBP Table 6,") {
				want = fmt.Sprintf("%.2f(%.2f)", *e.Published, e.Std) // FedOBP prints mean(std)
			}
			if !strings.Contains(text, want) {
				t.Errorf("%s: %s %s: %s does not occur in %s", filepath.Base(f), e.Method, e.Source, want, prefix)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("checked %d published numbers, want the tables' hundreds", checked)
	}
	t.Logf("%d published numbers found in the seed texts", checked)
}
