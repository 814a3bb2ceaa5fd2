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
