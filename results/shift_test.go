package results

import "testing"

// Without CIFAR-10-C the shift tables omit the replacement counts, and decode with them
// zero; with it, they are the last two columns.
func TestShiftClientCodec(t *testing.T) {
	rows := []ShiftClient{{Shift: "degree", Level: 0.5, Client: Client{Client: 1, Samples: 20, Loss: 0.5, Accuracy: 0.75}}}
	rest := ref(nil, f64("level", 0.5), i64("client", 1), i64("samples", 20), f64("loss", 0.5), f64("accuracy", 0.75)).Columns
	checkCodec(t, rows, nil, ref(nil, append(ref(nil, str("shift", "degree")).Columns, rest...)...), CIFAR10CColumns...)
	rows[0].Shift, rows[0].Own, rows[0].Drawn = "cifar10c:fog", 4, 16
	checkCodec(t, rows, nil, ref(nil, append(append(ref(nil, str("shift", "cifar10c:fog")).Columns, rest...),
		i64("cifar10c_own", 4), i64("cifar10c_drawn", 16))...))
}

func TestShiftSummaryCodec(t *testing.T) {
	rows := []ShiftSummary{{Shift: "fog", Level: 3, Mean: 0.5, Std: 0.25, Pooled: 0.625}}
	meta := map[string]string{"config": "fedavg", "run": "fedavg seed=0", "seed": "0"}
	cols := ref(meta, str("shift", "fog"), f64("level", 3), f64("accuracy_client_mean", 0.5), f64("accuracy_client_std", 0.25),
		f64("accuracy_pooled", 0.625)).Columns
	checkCodec(t, rows, meta, ref(meta, cols...), CIFAR10CColumns...)
	rows[0].Own, rows[0].Drawn = 1, 3
	checkCodec(t, rows, meta, ref(meta, append(cols, i64("cifar10c_own", 1), i64("cifar10c_drawn", 3))...))
}
