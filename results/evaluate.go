package results

// Client is one row of an evaluate stage's `clients` table: one client's test result.
type Client struct {
	Client   int     `arrow:"client"`
	Samples  int     `arrow:"samples"`
	Loss     float64 `arrow:"loss"`
	Accuracy float64 `arrow:"accuracy"`
}

// Summary is the one row of an evaluate stage's `summary` table: the final accuracy
// summarized over clients. Its metadata labels the run ("run", "config", "method",
// "seed") and, when the train stage recorded costs, holds the mean cost per client
// ("mb_up", "mb_down", "flops").
type Summary struct {
	Clients     int `arrow:"clients"`
	TestSamples int `arrow:"test_samples"`
	// Mean and Std are over clients, each client counting once (Std is the population
	// standard deviation, ddof = 0).
	Mean float64 `arrow:"accuracy_client_mean"`
	Std  float64 `arrow:"accuracy_client_std"`
	// Pooled is the accuracy over all test samples of all clients.
	Pooled float64 `arrow:"accuracy_pooled"`
	// MeanLoss is the pooled mean cross-entropy.
	MeanLoss float64 `arrow:"loss_pooled"`
	// Best is the best test accuracy seen at the evaluation rounds during training.
	Best Best
	// FT holds the same figures after fine-tuning (FL-bench's "after" column); its
	// columns are missing from the tables of runs that do not fine-tune.
	FT Finetuned
}

// Finetuned is the after-fine-tuning half of a summary: each client's model fine-tuned
// (a copy, never kept) before it is tested, at the final round and at the best evaluation
// round. Has is 1 for a run that fine-tunes, 0 otherwise (the other fields are then 0).
type Finetuned struct {
	Has             int     `arrow:"finetuned,optional"`
	Mean            float64 `arrow:"accuracy_client_mean_ft,optional"`
	Std             float64 `arrow:"accuracy_client_std_ft,optional"`
	Pooled          float64 `arrow:"accuracy_pooled_ft,optional"`
	MeanLoss        float64 `arrow:"loss_pooled_ft,optional"`
	BestMean        float64 `arrow:"best_accuracy_client_mean_ft,optional"`
	BestMeanRound   int     `arrow:"best_round_client_mean_ft,optional"`
	BestPooled      float64 `arrow:"best_accuracy_pooled_ft,optional"`
	BestPooledRound int     `arrow:"best_round_pooled_ft,optional"`
}

// FinetunedColumns lists the optional columns of Finetuned, which a summary of a run
// without fine-tuning leaves out (see ToTable's omit).
var FinetunedColumns = []string{"finetuned", "accuracy_client_mean_ft", "accuracy_client_std_ft", "accuracy_pooled_ft",
	"loss_pooled_ft", "best_accuracy_client_mean_ft", "best_round_client_mean_ft", "best_accuracy_pooled_ft", "best_round_pooled_ft"}

// AsSummary returns the after-fine-tuning figures laid out as a Summary (no counts).
func (f Finetuned) AsSummary() Summary {
	return Summary{Mean: f.Mean, Std: f.Std, Pooled: f.Pooled, MeanLoss: f.MeanLoss,
		Best: Best{Mean: f.BestMean, MeanRound: f.BestMeanRound, Pooled: f.BestPooled, PooledRound: f.BestPooledRound}}
}

// Best records the best test accuracy over the evaluation rounds of training (FedOBP
// reports the best of its evaluations every 100 rounds): by client mean and by pooled
// accuracy, each with its round.
type Best struct {
	Mean        float64 `arrow:"best_accuracy_client_mean"`
	MeanRound   int     `arrow:"best_round_client_mean"`
	Pooled      float64 `arrow:"best_accuracy_pooled"`
	PooledRound int     `arrow:"best_round_pooled"`
}
