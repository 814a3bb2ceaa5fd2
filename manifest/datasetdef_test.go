package manifest

import (
	"strings"
	"testing"
)

// A name no def is registered under is refused with the registered names and a
// did-you-mean; with none registered, the error says who registers them.
func TestCheckDatasetName(t *testing.T) {
	if msg := checkDatasetName("fmnist"); msg != "" {
		t.Errorf("fmnist refused: %s", msg)
	}
	msg := checkDatasetName("cifar1O")
	if !strings.HasPrefix(msg, `"cifar1O" is not one of fmnist, synthetic, mnist,`) || !strings.HasSuffix(msg, `(did you mean "cifar10"?)`) {
		t.Errorf("got %s", msg)
	}
	datasetMu.Lock()
	saved, savedOrder := datasets, datasetOrder
	datasets, datasetOrder = map[string]DatasetDef{}, nil
	datasetMu.Unlock()
	defer func() {
		datasetMu.Lock()
		datasets, datasetOrder = saved, savedOrder
		datasetMu.Unlock()
	}()
	if msg := checkDatasetName("fmnist"); !strings.Contains(msg, "none is registered (stages/data registers them") {
		t.Errorf("empty registry: got %s", msg)
	}
}

func TestRegisterDatasetRefusesATakenName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering fmnist twice did not panic")
		}
	}()
	RegisterDataset(DatasetDef{Name: "fmnist"})
}

func TestJoinAnd(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a and b"}, {[]string{"a", "b", "c"}, "a, b and c"}} {
		if got := joinAnd(c.in); got != c.want {
			t.Errorf("joinAnd(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// DatasetTitle gives the registered title, else the name itself.
func TestDatasetTitle(t *testing.T) {
	if got := DatasetTitle("cifar10"); got != "CIFAR-10" {
		t.Errorf("cifar10: %q", got)
	}
	if got := DatasetTitle("nosuch"); got != "nosuch" {
		t.Errorf("nosuch: %q", got)
	}
}
