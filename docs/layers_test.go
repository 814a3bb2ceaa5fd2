// Package docs holds the repository's pages and the tests that keep them true of the code;
// it has no Go code of its own.
package docs

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// floors reads the floors table of layout.md ("## How they depend": the first fenced block
// after it, one line per floor, "N  room, room — what they hold"): each room (a folder
// relative to the module root) to its floor.
func floors(layout string) (map[string]int, error) {
	_, rest, ok := strings.Cut(layout, "\n## How they depend\n")
	if !ok {
		return nil, fmt.Errorf("no section \"## How they depend\"")
	}
	_, rest, ok = strings.Cut(rest, "\n```\n")
	if !ok {
		return nil, fmt.Errorf("no fenced block in \"How they depend\"")
	}
	block, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		return nil, fmt.Errorf("the floors block is not closed")
	}
	out := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		rooms, _, _ := strings.Cut(line, "—")
		num, rooms, ok := strings.Cut(strings.TrimSpace(rooms), " ")
		floor, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("line %q: want \"N  room, room — what they hold\"", line)
		}
		for _, r := range strings.Split(rooms, ",") {
			r = strings.TrimSpace(r)
			if r == "" {
				return nil, fmt.Errorf("line %q: an empty room", line)
			}
			if f, dup := out[r]; dup {
				return nil, fmt.Errorf("room %s is on floors %d and %d", r, f, floor)
			}
			out[r] = floor
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the floors block is empty")
	}
	return out, nil
}

// floorOf is the floor of package dir (relative to the module root): that of the longest
// room it is or lies under; ok is false when no room holds it.
func floorOf(fl map[string]int, dir string) (floor int, ok bool) {
	best := ""
	for room, f := range fl {
		if (dir == room || strings.HasPrefix(dir, room+"/")) && len(room) > len(best) {
			best, floor, ok = room, f, true
		}
	}
	return floor, ok
}

// violations lists what breaks the floors: a package on no floor, and an import of a
// package on a higher floor. imports maps each package (a folder relative to the module
// root) to the module's packages its non-test files import.
func violations(fl map[string]int, imports map[string][]string) []string {
	var out []string
	for pkg, imps := range imports {
		pf, ok := floorOf(fl, pkg)
		if !ok {
			out = append(out, fmt.Sprintf("%s lies in no room of docs/layout.md's floors: add its folder", pkg))
			continue
		}
		for _, imp := range imps {
			if f, ok := floorOf(fl, imp); ok && f > pf {
				out = append(out, fmt.Sprintf("%s (floor %d) imports %s (floor %d), a floor above it", pkg, pf, imp, f))
			}
		}
	}
	sort.Strings(out)
	return out
}

// moduleImports parses every non-test .go file under root (build tags notwithstanding: a
// file for another system or the xla build counts too) and returns, per package folder,
// the packages of module it imports (each once), as folders relative to root.
func moduleImports(root, module string) (map[string][]string, error) {
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if _, seen := out[rel]; !seen {
			out[rel] = nil
		}
		for _, is := range f.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return err
			}
			if imp, ok := strings.CutPrefix(p, module+"/"); ok && !slices.Contains(out[rel], imp) {
				out[rel] = append(out[rel], imp)
			}
		}
		return nil
	})
	return out, err
}

// TestNoImportUp: no package imports one on a higher floor of docs/layout.md, and every
// package lies on a floor.
func TestNoImportUp(t *testing.T) {
	layout, err := os.ReadFile("layout.md")
	if err != nil {
		t.Fatal(err)
	}
	fl, err := floors(string(layout))
	if err != nil {
		t.Fatalf("layout.md: %v", err)
	}
	gomod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module := ""
	for _, line := range strings.Split(string(gomod), "\n") {
		if m, ok := strings.CutPrefix(line, "module "); ok {
			module = strings.TrimSpace(m)
		}
	}
	if module == "" {
		t.Fatal("go.mod names no module")
	}
	imports, err := moduleImports("..", module)
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 40 || len(imports["cmd/fedpipe"]) < 20 {
		t.Fatalf("found %d packages (cmd/fedpipe importing %d of the module's); the walk is broken", len(imports), len(imports["cmd/fedpipe"]))
	}
	for _, v := range violations(fl, imports) {
		t.Error(v)
	}
}

// The check itself: a package importing one a floor up is reported, one importing down or
// beside is not, a subfolder takes its room's floor unless a longer room places it, and a
// package in no room is reported.
func TestViolations(t *testing.T) {
	fl, err := floors("# x\n\n## How they depend\n\ntext\n\n```\n 3  top, side — above\n 2  mid/sub — a subfolder placed apart\n 1  mid, low — below\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := floorOf(fl, "mid/sub/deep"); f != 2 {
		t.Errorf("floor of mid/sub/deep = %d, want 2 (the longer room)", f)
	}
	got := violations(fl, map[string][]string{
		"top":      {"low", "mid/x", "side"},
		"low/a":    {"low/b", "mid/sub"},
		"mid/sub":  {"top/cmd"},
		"lost/pkg": {"low"},
	})
	want := []string{
		"lost/pkg lies in no room of docs/layout.md's floors: add its folder",
		"low/a (floor 1) imports mid/sub (floor 2), a floor above it",
		"mid/sub (floor 2) imports top/cmd (floor 3), a floor above it",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := floors("## How they depend\n\n```\n 1  a — x\n 2  a — y\n```\n"); err == nil {
		t.Error("a room on two floors was accepted")
	}
}
