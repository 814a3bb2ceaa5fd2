package results

// Run is one row of a report stage's `runs` table: one run (a seed of a configuration)
// and its final accuracy.
type Run struct {
	Run        string  `arrow:"run"`    // the run's label, as every exported table names it
	Config     string  `arrow:"config"` // the run's label without the seed
	Method     string  `arrow:"method"`
	Seed       int64   `arrow:"seed"`
	Clients    int     `arrow:"clients"`
	Mean       float64 `arrow:"accuracy_client_mean"`
	Std        float64 `arrow:"accuracy_client_std"`
	Pooled     float64 `arrow:"accuracy_pooled"`
	BestPooled float64 `arrow:"best_accuracy_pooled"`
}
