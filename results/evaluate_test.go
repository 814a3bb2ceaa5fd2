package results

import "testing"

func TestClientCodec(t *testing.T) {
	checkCodec(t, []Client{{Client: 0, Samples: 12, Loss: 0.75, Accuracy: 0.5}}, nil,
		ref(nil, i64("client", 0), i64("samples", 12), f64("loss", 0.75), f64("accuracy", 0.5)))
}

// The summary's Best is an untagged struct field: its columns come in place, after the
// final figures.
func TestSummaryCodec(t *testing.T) {
	s := Summary{Clients: 10, TestSamples: 250, Mean: 0.8, Std: 0.1, Pooled: 0.82, MeanLoss: 0.6,
		Best: Best{Mean: 0.85, MeanRound: 4, Pooled: 0.86, PooledRound: 6}}
	meta := map[string]string{"run": "fedavg seed=0", "config": "fedavg", "method": "fedavg", "seed": "0", "flops": "1e+12"}
	checkCodec(t, []Summary{s}, meta, ref(meta, i64("clients", 10), i64("test_samples", 250),
		f64("accuracy_client_mean", 0.8), f64("accuracy_client_std", 0.1), f64("accuracy_pooled", 0.82), f64("loss_pooled", 0.6),
		f64("best_accuracy_client_mean", 0.85), i64("best_round_client_mean", 4), f64("best_accuracy_pooled", 0.86), i64("best_round_pooled", 6)),
		FinetunedColumns...)
	// A run that fine-tunes stores the after-fine-tuning figures in columns of their own.
	ft := s
	ft.FT = Finetuned{Has: 1, Mean: 0.9, Std: 0.05, Pooled: 0.91, MeanLoss: 0.3, BestMean: 0.95, BestMeanRound: 2, BestPooled: 0.96, BestPooledRound: 3}
	checkCodec(t, []Summary{ft}, meta, ref(meta, i64("clients", 10), i64("test_samples", 250),
		f64("accuracy_client_mean", 0.8), f64("accuracy_client_std", 0.1), f64("accuracy_pooled", 0.82), f64("loss_pooled", 0.6),
		f64("best_accuracy_client_mean", 0.85), i64("best_round_client_mean", 4), f64("best_accuracy_pooled", 0.86), i64("best_round_pooled", 6),
		i64("finetuned", 1), f64("accuracy_client_mean_ft", 0.9), f64("accuracy_client_std_ft", 0.05), f64("accuracy_pooled_ft", 0.91),
		f64("loss_pooled_ft", 0.3), f64("best_accuracy_client_mean_ft", 0.95), i64("best_round_client_mean_ft", 2),
		f64("best_accuracy_pooled_ft", 0.96), i64("best_round_pooled_ft", 3)))
	b, err := Encode([]Summary{s}, meta)
	if err != nil {
		t.Fatal(err)
	}
	one, m, err := DecodeOne[Summary](b)
	if err != nil || one != s || m["flops"] != "1e+12" {
		t.Errorf("DecodeOne = %+v %v %v", one, m, err)
	}
	two, _ := Encode([]Summary{s, s}, nil)
	if _, _, err := DecodeOne[Summary](two); err == nil {
		t.Error("DecodeOne accepted two rows")
	}
}
