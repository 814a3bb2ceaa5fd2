package pipeline

import (
	"fmt"
	"io"
	"sort"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model/arch"
)

// KeyVersions are the versions stage keys are computed with, besides the backend's id: a
// result cached under other versions is recomputed. `fedpipe version` prints them.
type KeyVersions struct {
	// KeyScheme and CodeVersions are the key layout and the stage kinds' code versions.
	KeyScheme    string         `json:"key_scheme"`
	CodeVersions map[string]int `json:"code_versions"`
	// ArchRevisions are the architectures' own code versions, for those above 0
	// (arch.Revisions; part of the keys of every stage that has a model).
	ArchRevisions map[string]int `json:"arch_revisions"`
	// MethodRevisions are the methods' own code versions, for those above 0
	// (manifest.MethodDef.Revision; part of their train stages' keys).
	MethodRevisions map[string]int `json:"method_revisions"`
	// MethodBNRevisions are the methods' code versions on models with BatchNorm, for those
	// above 0 (manifest.MethodDef.BNRevision; part of such runs' train stage keys).
	MethodBNRevisions map[string]int `json:"method_bn_revisions"`
	// MethodOptionRevisions are the methods' code versions for one value of a word
	// parameter, by "method[impl=paper]" (manifest.MethodDef.OptionRevisions; part of the
	// train stage keys of the runs with that value).
	MethodOptionRevisions map[string]int `json:"method_option_revisions"`
}

// CurrentKeyVersions are this binary's key versions, over the methods registered now.
func CurrentKeyVersions() KeyVersions {
	return KeyVersions{KeyScheme: KeyScheme, CodeVersions: CodeVersions, ArchRevisions: arch.Revisions,
		MethodRevisions:       registeredRevisions(func(d manifest.MethodDef) int { return d.Revision }),
		MethodBNRevisions:     registeredRevisions(func(d manifest.MethodDef) int { return d.BNRevision }),
		MethodOptionRevisions: registeredOptionRevisions()}
}

// registeredOptionRevisions lists the registered methods' revisions for one value of a word
// parameter above 0, by "method[name=value]".
func registeredOptionRevisions() map[string]int {
	out := map[string]int{}
	for _, name := range manifest.MethodNames() {
		d, _ := manifest.LookupMethod(name)
		for opt, r := range d.OptionRevisions {
			if r > 0 {
				out[name+"["+opt+"]"] = r
			}
		}
	}
	return out
}

// registeredRevisions lists the registered methods whose revision, the one of picks out of
// their registration (Revision or BNRevision), is above 0.
func registeredRevisions(of func(manifest.MethodDef) int) map[string]int {
	out := map[string]int{}
	for _, name := range manifest.MethodNames() {
		if d, _ := manifest.LookupMethod(name); of(d) > 0 {
			out[name] = of(d)
		}
	}
	return out
}

// WriteText prints the versions as `fedpipe version` does: the key scheme, then a line of
// name=version pairs for each kind of version.
func (v KeyVersions) WriteText(w io.Writer) {
	fmt.Fprintf(w, "key scheme: %s\n", v.KeyScheme)
	writeVersions(w, "stage code:", v.CodeVersions)
	writeVersions(w, "models:    ", v.ArchRevisions)
	writeVersions(w, "methods:   ", v.MethodRevisions)
	writeVersions(w, "methods on BatchNorm models:", v.MethodBNRevisions)
	writeVersions(w, "methods' settings:", v.MethodOptionRevisions)
}

// writeVersions prints a line of name=version pairs in name order ("none" when empty).
func writeVersions(w io.Writer, label string, versions map[string]int) {
	names := make([]string, 0, len(versions))
	for k := range versions {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprint(w, label)
	if len(names) == 0 {
		fmt.Fprint(w, " none")
	}
	for _, k := range names {
		fmt.Fprintf(w, " %s=%d", k, versions[k])
	}
	fmt.Fprintln(w)
}
