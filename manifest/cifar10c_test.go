package manifest

import (
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
