package manifest

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestManifestsDocNamesEveryField: every field a manifest may hold (the yaml names of
// Manifest and the structs under it) appears in docs/manifests.md, as "name:" in its
// example or in backquotes, so the reference cannot fall behind what the decoder accepts.
func TestManifestsDocNamesEveryField(t *testing.T) {
	b, err := os.ReadFile("../docs/manifests.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] {
			return
		}
		seen[ty] = true
		for i := range ty.NumField() {
			f := ty.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			re := regexp.MustCompile(`(?m)(^|[\s{,])` + regexp.QuoteMeta(name) + `:`)
			if !re.MatchString(doc) && !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("docs/manifests.md does not name %s%s", path, name)
			}
			walk(f.Type, path+name+".")
		}
	}
	walk(reflect.TypeOf(Manifest{}), "")
	if len(seen) < 5 {
		t.Fatalf("walked %d structs: the test no longer sees the manifest's fields", len(seen))
	}
}
