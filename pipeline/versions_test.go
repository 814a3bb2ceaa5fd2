package pipeline

import (
	"bytes"
	"testing"
)

// KeyVersions' text: the key scheme, then one line per kind of version, its pairs in name
// order, "none" for a kind without any.
func TestKeyVersionsText(t *testing.T) {
	v := KeyVersions{KeyScheme: "scheme/1", CodeVersions: map[string]int{"train": 3, "evaluate": 2},
		ArchRevisions: map[string]int{"cnn4": 1}, MethodRevisions: map[string]int{},
		MethodBNRevisions: map[string]int{"feddpa": 2}, MethodOptionRevisions: map[string]int{"apfl[impl=flbench]": 1}}
	var b bytes.Buffer
	v.WriteText(&b)
	want := "key scheme: scheme/1\nstage code: evaluate=2 train=3\nmodels:     cnn4=1\nmethods:    none\n" +
		"methods on BatchNorm models: feddpa=2\nmethods' settings: apfl[impl=flbench]=1\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// CurrentKeyVersions carries the key scheme and stage code versions keys are computed with.
func TestCurrentKeyVersions(t *testing.T) {
	v := CurrentKeyVersions()
	if v.KeyScheme != KeyScheme || len(v.CodeVersions) != len(CodeVersions) {
		t.Errorf("key versions %q %v, want %q %v", v.KeyScheme, v.CodeVersions, KeyScheme, CodeVersions)
	}
	for k, n := range CodeVersions {
		if v.CodeVersions[k] != n {
			t.Errorf("code version of %s: %d, want %d", k, v.CodeVersions[k], n)
		}
	}
}
