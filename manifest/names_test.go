package manifest

import (
	"fmt"
	"strings"
	"testing"
)

// Labels that would display as another, and names holding control characters, are refused
// at the name's line.
func TestNameChecks(t *testing.T) {
	// Labels that would display as another: a bidirectional override, a trailing space, a
	// method name differing from another only by case.
	for src, want := range map[string]string{
		"name: \"tiny\u202egnp.exe\"\n": "m.yaml:1:7: name: \"tiny\\u202egnp.exe\" holds the bidirectional control character U+202E",
		"name: \"tiny \"\n":             "m.yaml:1:7: name: \"tiny \" begins or ends with a space",
		"name: t\nmethods: [{name: fedavg}, {name: FedAvg, method: fedavg}]\n": "methods[1].name: \"FedAvg\" differs from methods[0]'s \"fedavg\" only by case",
		"name: t\nmethods: [{name: \"fedavg \", method: fedavg}]\n":            "methods[0].name: \"fedavg \" begins or ends with a space",
	} {
		src += "dataset: {name: synthetic}\npartition: {scheme: natural}\n"
		if !strings.Contains(src, "methods:") {
			src += "methods: [{name: fedavg}]\n"
		}
		if _, err := ParseManifest("m.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
	for _, name := range []string{"a\nb", "a\x00b", "a\x1b[31mb", "a\rb"} {
		src := fmt.Sprintf("name: %q\ndataset: {name: synthetic}\npartition: {scheme: natural}\nmethods: [{name: fedavg}]\n", name)
		if _, err := ParseManifest("m.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "m.yaml:1:7: name:") || !strings.Contains(err.Error(), "control character") {
			t.Errorf("name %q: %v", name, err)
		}
		src = fmt.Sprintf("name: t\ndataset: {name: synthetic}\npartition: {scheme: natural}\nmethods: [{name: %q, method: fedavg}]\n", name)
		if _, err := ParseManifest("m.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "methods[0].name") {
			t.Errorf("method name %q: %v", name, err)
		}
	}
}
