package pipeline

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const c10cManifest = `name: c
dataset: {name: cifar10}
partition: {clients: 4}
methods: [{name: fedavg}]
`

// shift.cifar10c is checked when the manifest is read: dataset cifar10 only, known names
// with a suggestion, no duplicates, a path only with names; expectations may select the
// cifar10c:<name> kind.
func TestCIFAR10CShiftValidation(t *testing.T) {
	ok := c10cManifest + "shift: {cifar10c: [gaussian_noise, fog], severities: [1, 3]}\nexpect:\n  - {method: fedavg, metric: final_client_mean, shift: \"cifar10c:fog\", level: 3, published: 50}\n"
	m, err := ParseManifest("m.yaml", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if m.Shift.Empty() || len(m.Shift.CIFAR10C) != 2 {
		t.Fatalf("shift %+v", m.Shift)
	}
	def, err := ParseManifest("m.yaml", []byte(c10cManifest+"shift: {cifar10c: [fog]}\n"))
	if err != nil || len(def.Shift.Severities) != 5 {
		t.Fatalf("default severities: %v %v", def.Shift.Severities, err)
	}
	for _, c := range []struct{ src, want string }{
		{strings.Replace(c10cManifest, "cifar10}", "fmnist}", 1) + "shift: {cifar10c: [fog]}\n", "m.yaml:5:19: shift.cifar10c: the real CIFAR-10-C corruptions replace CIFAR-10 test images: they need dataset cifar10, not fmnist"},
		{c10cManifest + "shift: {cifar10c: [gausian_noise]}\n", `shift.cifar10c[0]: unknown CIFAR-10-C corruption "gausian_noise" (did you mean "gaussian_noise"?)`},
		{c10cManifest + "shift: {cifar10c: [jpeg]}\n", `unknown CIFAR-10-C corruption "jpeg"`},
		{c10cManifest + "shift: {cifar10c: [fog, fog]}\n", `shift.cifar10c[1]: corruption "fog" listed twice`},
		{c10cManifest + "shift: {cifar10c_path: /x}\n", "shift.cifar10c_path: no shift.cifar10c corruptions"},
		{c10cManifest + "shift: {cifar10c: [fog], severities: [6]}\n", "shift.severities[0]: severity 6 outside 1..5"},
		{c10cManifest + "shift: {cifar10c: [fog]}\nexpect: [{method: fedavg, metric: final_pooled, shift: fog, level: 1, published: 1}]\n", `(the real CIFAR-10-C corruption is "cifar10c:fog")`},
		{c10cManifest + "shift: {cifar10c: [fog], severities: [2]}\nexpect: [{method: fedavg, metric: final_pooled, shift: \"cifar10c:fog\", level: 1, published: 1}]\n", `level 1 of shift "cifar10c:fog" is not in shift.severities [2]`},
	} {
		_, err := ParseManifest("m.yaml", []byte(c.src))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}

// shiftKey builds the manifest's graph with a fixed CIFAR-10-C digest and returns the
// shift stage's key and descriptor.
func shiftKey(t *testing.T, src, digest string, find error) (Key, []byte, error) {
	t.Helper()
	m, err := ParseManifest("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Build(m, BuildOptions{Backend: "cpu",
		Describe: func(DatasetSpec) (*DataDesc, error) {
			return &DataDesc{Digest: "d", Shape: []int{32, 32, 3}, Classes: 10, Samples: 60000}, nil
		},
		CIFAR10C: func(s ShiftSpec, ds DatasetSpec) (string, error) {
			if ds.Name != "cifar10" || len(s.CIFAR10C) == 0 {
				t.Errorf("CIFAR10C called with %+v %+v", s, ds)
			}
			return digest, find
		}})
	if err != nil {
		return Key{}, nil, err
	}
	for _, n := range g.Nodes {
		if n.Kind == KindShift {
			return n.Key, n.desc, nil
		}
	}
	t.Fatal("no shift stage")
	return Key{}, nil, nil
}

// The CIFAR-10-C files' digest enters the shift stage's key, their path does not; shift
// blocks without cifar10c keep the parameters (so the keys) they had before it existed; a
// lookup failure is invalid input naming the shift field.
func TestCIFAR10CDigestInShiftKey(t *testing.T) {
	src := c10cManifest + "shift: {cifar10c: [fog], severities: [1]}\n"
	a, desc, err := shiftKey(t, src, "sha256:aa", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(desc), `"cifar10c":"sha256:aa"`) {
		t.Errorf("descriptor lacks the digest: %s", desc)
	}
	b, _, _ := shiftKey(t, c10cManifest+"shift: {cifar10c: [fog], severities: [1], cifar10c_path: /elsewhere}\n", "sha256:aa", nil)
	c, _, _ := shiftKey(t, src, "sha256:bb", nil)
	if a != b {
		t.Error("shift.cifar10c_path changed the key")
	}
	if a == c {
		t.Error("another CIFAR-10-C digest left the key unchanged")
	}
	_, _, err = shiftKey(t, c10cManifest+"shift: {cifar10c: [fog], cifar10c_path: /nope}\n", "", &InputError{Msg: "dataset cifar10c not found: looked for labels.npy, fog.npy in\n  /nope"})
	if !IsInvalid(err) || !strings.Contains(err.Error(), "shift.cifar10c_path") || !strings.Contains(err.Error(), "/nope") {
		t.Errorf("missing files: %v", err)
	}
	// A shift block without cifar10c hashes as before the field existed.
	p, err := json.Marshal(shiftParams{Shift: ShiftSpec{Degrees: []float64{0.5}, Severities: []int{1}}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"personal":false,"shift":{"Degrees":[0.5],"Corruptions":null,"Severities":[1],"LabelAlpha":null},"seed":3}`; string(p) != want {
		t.Errorf("shift params\n got %s\nwant %s", p, want)
	}
}
