package site

// The row types of the data tables behind the page's tables and figures (written under
// tables/ as Parquet and CSV), laid out by the results package's codec (dataTable).

// resultCell is a row of the results table: one method and grid cell.
type resultCell struct {
	Method    string  `arrow:"method"`
	Cell      string  `arrow:"cell"`
	Seeds     int     `arrow:"seeds"`
	Mean      float64 `arrow:"mean"`
	Std       float64 `arrow:"std"`
	Published float64 `arrow:"published"`
	Verdict   string  `arrow:"verdict"`
}

// roundAccuracy is a point of the accuracy-per-round figure.
type roundAccuracy struct {
	Cell     string  `arrow:"cell"`
	Method   string  `arrow:"method"`
	Round    int     `arrow:"round"`
	Accuracy float64 `arrow:"accuracy"`
}

// layerFraction is a point of the personalized-fraction figure.
type layerFraction struct {
	Tensor  string  `arrow:"tensor"`
	Round   int     `arrow:"round"`
	Percent float64 `arrow:"personalized_percent"`
}

// scoreAccuracy is a point of FedOBP's score-vs-quantile figure.
type scoreAccuracy struct {
	Score    string  `arrow:"score"`
	Q        float64 `arrow:"q"`
	Accuracy float64 `arrow:"accuracy"`
}

// shiftAccuracy is a point of an accuracy-under-shift figure.
type shiftAccuracy struct {
	Method string  `arrow:"method"`
	Level  float64 `arrow:"level"`
	Mean   float64 `arrow:"accuracy_client_mean"`
	Std    float64 `arrow:"accuracy_client_std"`
}
