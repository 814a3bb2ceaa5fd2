package results

import "testing"

func TestRunCodec(t *testing.T) {
	checkCodec(t, []Run{{Run: "fedavg lr=0.1 seed=3", Config: "fedavg lr=0.1", Method: "fedavg", Seed: 3, Clients: 10, Mean: 0.5, Std: 0.125, Pooled: 0.625, BestPooled: 0.75}}, nil,
		ref(nil, str("run", "fedavg lr=0.1 seed=3"), str("config", "fedavg lr=0.1"), str("method", "fedavg"), i64("seed", 3), i64("clients", 10),
			f64("accuracy_client_mean", 0.5), f64("accuracy_client_std", 0.125), f64("accuracy_pooled", 0.625), f64("best_accuracy_pooled", 0.75)))
}
