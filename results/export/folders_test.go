package export

import (
	"regexp"
	"strings"
	"testing"
)

func TestFolderName(t *testing.T) {
	for _, c := range []struct {
		in, want string
		exact    bool
	}{
		{"train fedavg lr=0.1 seed=0", "train_fedavg_lr-0.1_seed-0", true},
		{"partition alpha=0.5 seed=12", "partition_alpha-0.5_seed-12", true},
		{"evaluate dmpfl_plus local_epochs=5 lr=-0.01 seed=3", "evaluate_dmpfl_plus_local_epochs-5_lr--0.01_seed-3", true},
		{"train FedAvg+FT seed=0", "train_FedAvg+FT_seed-0", true},
		{"report", "report", true},
		{"train fed/avg: x seed=0", "train_fed_avg__x_seed-0", false},
		{"train fédavg seed=0", "train_f_davg_seed-0", false},
		{"train a~b seed=0", "train_a_b_seed-0", false},
		{"..", "_..", false},
		{"", "_", false},
		{strings.Repeat("x", 300), strings.Repeat("x", maxFolderName), false},
	} {
		got, exact := FolderName(c.in)
		if got != c.want || exact != c.exact {
			t.Errorf("FolderName(%q) = %q, %v; want %q, %v", c.in, got, exact, c.want, c.exact)
		}
	}
}

func TestFolderNamesUniqueAndStable(t *testing.T) {
	names := []string{
		"train fedavg lr=0.1 seed=0", "train fedavg lr=0.1 seed=1",
		"train a b seed=0", "train a_b seed=0", // the same folder name
		"train X seed=0", "train x seed=0", // the same on a case-insensitive filesystem
		"train p/q seed=0", "train p:q seed=0", // inexact, the same before the hash
		"train fedavg lr=0.1 seed=0", // repeated: one folder
	}
	got := FolderNames(names)
	if len(got) != len(names)-1 {
		t.Fatalf("%d folders for %d names", len(got), len(names)-1)
	}
	seen := map[string]string{}
	hashed := regexp.MustCompile(`~[0-9a-f]{8}$`)
	for name, f := range got {
		if strings.ContainsAny(f, "=/\\: ") || len(f) > maxFolderName+9 {
			t.Errorf("%q → %q", name, f)
		}
		if other, dup := seen[strings.ToLower(f)]; dup {
			t.Errorf("%q and %q share %q", name, other, f)
		}
		seen[strings.ToLower(f)] = name
		if _, exact := FolderName(name); !exact && !hashed.MatchString(f) {
			t.Errorf("%q → %q: no hash suffix", name, f)
		}
	}
	for _, name := range []string{"train fedavg lr=0.1 seed=0", "train fedavg lr=0.1 seed=1"} {
		if want, _ := FolderName(name); got[name] != want {
			t.Errorf("%q → %q, want %q (no collision, no hash)", name, got[name], want)
		}
	}
	// A name's folder does not depend on unrelated names.
	if again := FolderNames([]string{"train p/q seed=0"}); again["train p/q seed=0"] != got["train p/q seed=0"] {
		t.Errorf("%q: %q alone, %q with others", "train p/q seed=0", again["train p/q seed=0"], got["train p/q seed=0"])
	}
}
