package methods

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// TestMethodsDocListsEveryParameter: docs/methods.md has one row per registered method,
// and its parameters column names (in backquotes) exactly the parameters the method
// registers, so the page a user reads cannot drift from what the manifest accepts.
func TestMethodsDocListsEveryParameter(t *testing.T) {
	b, err := os.ReadFile("../../../docs/methods.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| ` + "`([a-z0-9_]+)`" + ` \| ((?:[^|\\]|\\.)*) \|`) // "\|" inside a cell
	tick := regexp.MustCompile("`([a-z0-9_]+)`")
	documented := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		var names []string
		for _, p := range tick.FindAllStringSubmatch(m[2], -1) {
			names = append(names, p[1])
		}
		slices.Sort(names)
		documented[m[1]] = names
	}
	for _, name := range manifest.MethodNames() {
		d, _ := manifest.LookupMethod(name)
		var want []string
		for _, p := range d.ParamDefs() {
			want = append(want, p.Name)
		}
		slices.Sort(want)
		got, ok := documented[name]
		if !ok {
			t.Errorf("docs/methods.md has no row for %s", name)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("docs/methods.md: %s lists [%s], the method takes [%s]", name, strings.Join(got, " "), strings.Join(want, " "))
		}
	}
}

// Every registered method has a display name (legends and tables use it), and the README
// lists each among the methods fedpipe implements.
func TestEveryMethodHasADisplayName(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range manifest.MethodNames() {
		d, _ := manifest.LookupMethod(name)
		if d.Display == "" || manifest.DisplayName(name) != d.Display {
			t.Errorf("%s: no display name", name)
			continue
		}
		if !strings.Contains(string(b), d.Display+",") && !strings.Contains(string(b), d.Display+" ") {
			t.Errorf("%s: README.md does not name %q", name, d.Display)
		}
	}
}

// A run label prints with its method's display name in place of the method's id, its grid
// values kept; a label the manifest chose itself stays as written.
func TestDisplayLabelReplacesOnlyTheMethodsID(t *testing.T) {
	for _, c := range []struct{ label, method, want string }{
		{"fedavg", "fedavg", "FedAvg"},
		{"fedavg lr=0.1", "fedavg", "FedAvg lr=0.1"},
		{"fedavgx", "fedavg", "fedavgx"},
		{"fedavg-ft", "fedavg", "fedavg-ft"},
		{"local mu=1", "fedprox", "local mu=1"},
	} {
		if got := manifest.DisplayLabel(c.label, c.method); got != c.want {
			t.Errorf("DisplayLabel(%q, %q) = %q, want %q", c.label, c.method, got, c.want)
		}
	}
}
