package methods

import (
	"reflect"
	"testing"
)

func TestFedProxMuZeroIsFedAvg(t *testing.T) {
	prox, _ := run(t, "fedprox", map[string]float64{"mu": 0}, 3)
	avg, _ := run(t, "fedavg", nil, 3)
	if !reflect.DeepEqual(prox.Global, avg.Global) || !reflect.DeepEqual(prox.Metrics, avg.Metrics) {
		t.Error("FedProx with mu = 0 differs from FedAvg")
	}
	pulled, _ := run(t, "fedprox", map[string]float64{"mu": 1}, 3)
	if reflect.DeepEqual(pulled.Global, avg.Global) {
		t.Error("mu = 1 changed nothing")
	}
}
