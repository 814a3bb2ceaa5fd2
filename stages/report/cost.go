package report

import (
	"fmt"
	"strings"
)

// CostEntry is one run's mean cost per client over the whole run (DM-PFL Table 4).
type CostEntry struct {
	Config, Method string
	MBUp, MBDown   float64 // megabytes (10^6 bytes)
	FLOPs          float64 // training FLOPs
}

// CostMarkdown renders communication and computation per client beside FedAvg's: one row
// per configuration (seeds averaged) with MB up, MB down and training FLOPs, and each as a
// multiple of the first FedAvg configuration's when there is one.
func CostMarkdown(entries []CostEntry) string {
	if len(entries) == 0 {
		return ""
	}
	type agg struct {
		method             string
		up, down, flops, n float64
	}
	var order []string
	rows := map[string]*agg{}
	for _, e := range entries {
		a := rows[e.Config]
		if a == nil {
			a = &agg{method: e.Method}
			rows[e.Config] = a
			order = append(order, e.Config)
		}
		a.up += e.MBUp
		a.down += e.MBDown
		a.flops += e.FLOPs
		a.n++
	}
	var base *agg
	for _, c := range order {
		if rows[c].method == "fedavg" {
			base = rows[c]
			break
		}
	}
	ratio := func(v, b float64) string {
		if base == nil || b == 0 {
			return ""
		}
		return fmt.Sprintf(" (%.2f×)", v/b)
	}
	var b strings.Builder
	b.WriteString("\n### Cost per client over the run (mean over clients; × FedAvg's)\n\n")
	b.WriteString("| method | MB up | MB down | training FLOPs |\n|---|---:|---:|---:|\n")
	for _, c := range order {
		a := rows[c]
		up, down, flops := a.up/a.n, a.down/a.n, a.flops/a.n
		var bu, bd, bf float64
		if base != nil {
			bu, bd, bf = base.up/base.n, base.down/base.n, base.flops/base.n
		}
		fmt.Fprintf(&b, "| %s | %.3f%s | %.3f%s | %.3g%s |\n", c, up, ratio(up, bu), down, ratio(down, bd), flops, ratio(flops, bf))
	}
	return b.String()
}
