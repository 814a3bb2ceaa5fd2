package train

import (
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts/table"
)

// MetricsTable encodes metric rows as a table with columns round, client, split, loss,
// accuracy, samples.
func MetricsTable(rows []Metric) *table.Table {
	var round, client, samples []int64
	var split []string
	var loss, acc []float64
	for _, r := range rows {
		round = append(round, int64(r.Round))
		client = append(client, int64(r.Client))
		split = append(split, r.Split)
		loss = append(loss, r.Loss)
		acc = append(acc, r.Accuracy)
		samples = append(samples, int64(r.Samples))
	}
	return &table.Table{Columns: []table.Column{
		table.Int64Col("round", round),
		table.Int64Col("client", client),
		table.StringCol("split", split),
		table.Float64Col("loss", loss),
		table.Float64Col("accuracy", acc),
		table.Int64Col("samples", samples),
	}}
}

// MetricsFromTable decodes a table written by MetricsTable.
func MetricsFromTable(t *table.Table) ([]Metric, error) {
	cols := map[string]*table.Column{}
	for _, name := range []string{"round", "client", "split", "loss", "accuracy", "samples"} {
		if cols[name] = t.Col(name); cols[name] == nil {
			return nil, fmt.Errorf("metrics table has no column %q", name)
		}
	}
	rows := make([]Metric, t.NumRows())
	for i := range rows {
		rows[i] = Metric{Round: int(cols["round"].Int64[i]), Client: int(cols["client"].Int64[i]),
			Split: cols["split"].String[i], Loss: cols["loss"].Float64[i], Accuracy: cols["accuracy"].Float64[i],
			Samples: int(cols["samples"].Int64[i])}
	}
	return rows, nil
}
