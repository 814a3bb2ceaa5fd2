package train

import (
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/stages/evaluate"
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

// SelectionTable encodes personalized-fraction rows: round, client, tensor, personalized,
// total, fraction.
func SelectionTable(rows []Selection) *table.Table {
	var round, client, pers, total []int64
	var name []string
	var frac []float64
	for _, r := range rows {
		round = append(round, int64(r.Round))
		client = append(client, int64(r.Client))
		name = append(name, r.Tensor)
		pers = append(pers, int64(r.Personalized))
		total = append(total, int64(r.Total))
		frac = append(frac, float64(r.Personalized)/float64(max(r.Total, 1)))
	}
	return &table.Table{Columns: []table.Column{
		table.Int64Col("round", round),
		table.Int64Col("client", client),
		table.StringCol("tensor", name),
		table.Int64Col("personalized", pers),
		table.Int64Col("total", total),
		table.Float64Col("fraction", frac),
	}}
}

// SelectionFromTable decodes a table written by SelectionTable.
func SelectionFromTable(t *table.Table) ([]Selection, error) {
	round, client, name, pers, total := t.Col("round"), t.Col("client"), t.Col("tensor"), t.Col("personalized"), t.Col("total")
	if round == nil || client == nil || name == nil || pers == nil || total == nil {
		return nil, fmt.Errorf("selection table lacks columns")
	}
	rows := make([]Selection, t.NumRows())
	for i := range rows {
		rows[i] = Selection{Round: int(round.Int64[i]), Client: int(client.Int64[i]), Tensor: name.String[i],
			Personalized: int(pers.Int64[i]), Total: int(total.Int64[i])}
	}
	return rows, nil
}

// IoUTable encodes pairwise mask IoU rows: tensor, client_a, client_b, iou.
func IoUTable(rows []MaskIoU) *table.Table {
	var name []string
	var a, b []int64
	var iou []float64
	for _, r := range rows {
		name = append(name, r.Tensor)
		a = append(a, int64(r.ClientA))
		b = append(b, int64(r.ClientB))
		iou = append(iou, r.IoU)
	}
	return &table.Table{Columns: []table.Column{
		table.StringCol("tensor", name),
		table.Int64Col("client_a", a),
		table.Int64Col("client_b", b),
		table.Float64Col("iou", iou),
	}}
}

// TestRow exposes a metric row to evaluate.BestOf.
func (m Metric) TestRow() (int, evaluate.Client, bool) {
	return m.Round, evaluate.Client{Client: m.Client, Samples: m.Samples, Loss: m.Loss, Accuracy: m.Accuracy}, m.Split == "test"
}

// CommTable encodes communication rows: round, client, bytes_down, bytes_up.
func CommTable(rows []Comm) *table.Table {
	var round, client, down, up []int64
	for _, r := range rows {
		round = append(round, int64(r.Round))
		client = append(client, int64(r.Client))
		down = append(down, r.Down)
		up = append(up, r.Up)
	}
	return &table.Table{Columns: []table.Column{
		table.Int64Col("round", round),
		table.Int64Col("client", client),
		table.Int64Col("bytes_down", down),
		table.Int64Col("bytes_up", up),
	}}
}

// CommFromTable decodes a table written by CommTable.
func CommFromTable(t *table.Table) ([]Comm, error) {
	round, client, down, up := t.Col("round"), t.Col("client"), t.Col("bytes_down"), t.Col("bytes_up")
	if round == nil || client == nil || down == nil || up == nil {
		return nil, fmt.Errorf("communication table lacks columns")
	}
	rows := make([]Comm, t.NumRows())
	for i := range rows {
		rows[i] = Comm{Round: int(round.Int64[i]), Client: int(client.Int64[i]), Down: down.Int64[i], Up: up.Int64[i]}
	}
	return rows, nil
}
