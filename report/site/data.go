package site

// The row types of the data tables behind the page's tables and figures (written under
// tables/ as Parquet and CSV), laid out by the results package's codec (dataTable). Their
// values are percentages, so their columns are named *_pct: an `accuracy` column is a
// fraction everywhere in fedpipe's tables.

// resultCell is a row of the results table: one method and grid cell.
type resultCell struct {
	Method string `arrow:"method"`
	// Display is the method as its paper writes it (the registered display name, with the
	// row's own grid choices), as the page, the LaTeX table and the figures name it.
	Display   string  `arrow:"display"`
	Cell      string  `arrow:"cell"`
	Seeds     int     `arrow:"seeds"`
	Mean      float64 `arrow:"mean_pct"`
	Std       float64 `arrow:"std_pct"`
	Published float64 `arrow:"published_pct"`
	Verdict   string  `arrow:"verdict"`
	// StdSample is the sample standard deviation over seeds (ddof = 1; NaN with one seed).
	StdSample float64 `arrow:"std_sample_pct"`
	// CILo and CIHi are the 95 % interval Interval names: "seeds" (Student t over seeds) or
	// "test set" (one seed: Wilson over the pooled test samples, or a bootstrap over clients);
	// NaN and "" when none can be computed.
	CILo     float64 `arrow:"ci95_lo_pct"`
	CIHi     float64 `arrow:"ci95_hi_pct"`
	Interval string  `arrow:"ci95_over"`
	// VsBest is "best", "not significantly different" or "significantly worse" (from the
	// column's best, by the paired test over CompareOver, Holm-corrected p PBest).
	VsBest      string  `arrow:"vs_best"`
	PBest       float64 `arrow:"p_vs_best_holm"`
	CompareOver string  `arrow:"compare_over"`
}

// pairwiseRow is a row of the pairwise table: method B against method A on one cell.
type pairwiseRow struct {
	Cell string `arrow:"cell"`
	A    string `arrow:"method_a"`
	B    string `arrow:"method_b"`
	// Over is the unit paired over ("seeds" or "clients"), N the number of pairs.
	Over string `arrow:"paired_over"`
	N    int    `arrow:"n"`
	// Diff is the mean of B − A; Lo and Hi its 95 % Student-t interval (NaN with one pair).
	Diff float64 `arrow:"mean_diff_pct"`
	Lo   float64 `arrow:"ci95_lo_pct"`
	Hi   float64 `arrow:"ci95_hi_pct"`
	// P is Test's two-sided p-value; PHolm it corrected over the cell's pairs.
	P     float64 `arrow:"p"`
	PHolm float64 `arrow:"p_holm"`
	Test  string  `arrow:"test"`
}

// roundAccuracy is a point of the accuracy-per-round figure.
type roundAccuracy struct {
	Cell     string  `arrow:"cell"`
	Method   string  `arrow:"method"`
	Display  string  `arrow:"display"`
	Round    int     `arrow:"round"`
	Accuracy float64 `arrow:"accuracy_pct"`
	// Std is the population std over seeds (NaN with one seed).
	Std float64 `arrow:"accuracy_std_pct"`
}

// layerFraction is a point of the personalized-fraction figure.
type layerFraction struct {
	Tensor  string  `arrow:"tensor"`
	Round   int     `arrow:"round"`
	Percent float64 `arrow:"personalized_pct"`
}

// scoreAccuracy is a point of FedOBP's score-vs-quantile figure.
type scoreAccuracy struct {
	Score    string  `arrow:"score"`
	Q        float64 `arrow:"q"`
	Accuracy float64 `arrow:"accuracy_pct"`
}

// shiftAccuracy is a point of an accuracy-under-shift figure.
type shiftAccuracy struct {
	Method  string  `arrow:"method"`
	Display string  `arrow:"display"`
	Level   float64 `arrow:"level"`
	Mean    float64 `arrow:"accuracy_client_mean_pct"`
	Std     float64 `arrow:"accuracy_client_std_pct"`
}
