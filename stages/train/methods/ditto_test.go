package methods

import (
	"reflect"
	"testing"
)

func TestDittoLambdaZeroIsLocal(t *testing.T) {
	d, _ := run(t, "ditto", map[string]float64{"lambda": 0}, 3)
	l, _ := run(t, "local", nil, 3)
	if !reflect.DeepEqual(d.Personal, l.Personal) {
		t.Error("Ditto's personal models with lambda = 0 differ from train.Local training")
	}
}
