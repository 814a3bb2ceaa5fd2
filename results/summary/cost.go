package summary

import (
	"fmt"
	"strconv"
)

// CostEntry is one run's mean cost per client over the whole run (DM-PFL Table 4).
type CostEntry struct {
	Config, Method string
	MBUp, MBDown   float64 // megabytes (10^6 bytes)
	FLOPs          float64 // training FLOPs
	// Reference: the run's method is the one the others' costs are stated as multiples of
	// (its registration's manifest.MethodDef.CostReference: FedAvg).
	Reference bool
	// Display is Config as tables print it (see Entry.Display); empty means Config.
	Display string
}

// CostEntryFromSummary reads a run's cost from its evaluate summary table's metadata
// (mb_up, mb_down, flops; see results.Summary); false when the summary carries none.
// reference says whether method is the cost reference (CostEntry.Reference).
func CostEntryFromSummary(meta map[string]string, config, method string, reference bool) (CostEntry, bool) {
	if _, ok := meta["flops"]; !ok {
		return CostEntry{}, false
	}
	f := func(k string) float64 {
		v, _ := strconv.ParseFloat(meta[k], 64)
		return v
	}
	return CostEntry{Config: config, Method: method, MBUp: f("mb_up"), MBDown: f("mb_down"), FLOPs: f("flops"), Reference: reference}, true
}

// CostGrid lays communication and computation per client out beside FedAvg's (DM-PFL
// Table 4): one row per configuration (seeds averaged) with MB up, MB down and training
// FLOPs, each also as a multiple of the first reference configuration's (CostEntry.Reference:
// FedAvg) when there is one.
// False when there are no entries.
func CostGrid(entries []CostEntry) (Grid, bool) {
	if len(entries) == 0 {
		return Grid{}, false
	}
	type agg struct {
		reference          bool
		up, down, flops, n float64
	}
	var order []string
	display := map[string]string{} // config → its printed form
	rows := map[string]*agg{}
	for _, e := range entries {
		a := rows[e.Config]
		if a == nil {
			a = &agg{reference: e.Reference}
			rows[e.Config] = a
			order = append(order, e.Config)
			display[e.Config] = e.Config
			if e.Display != "" {
				display[e.Config] = e.Display
			}
		}
		a.up += e.MBUp
		a.down += e.MBDown
		a.flops += e.FLOPs
		a.n++
	}
	var base *agg
	for _, c := range order {
		if rows[c].reference {
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
	g := Grid{Title: "Cost per client over the run (mean over clients; × FedAvg's)",
		Head: []string{"method", "MB up", "MB down", "training FLOPs"}, Text: 1}
	for _, c := range order {
		a := rows[c]
		up, down, flops := a.up/a.n, a.down/a.n, a.flops/a.n
		var bu, bd, bf float64
		if base != nil {
			bu, bd, bf = base.up/base.n, base.down/base.n, base.flops/base.n
		}
		g.Rows = append(g.Rows, []string{display[c], fmt.Sprintf("%.3f%s", up, ratio(up, bu)),
			fmt.Sprintf("%.3f%s", down, ratio(down, bd)), fmt.Sprintf("%.3g%s", flops, ratio(flops, bf))})
	}
	return g, true
}

// CostMarkdown renders CostGrid ("" without entries).
func CostMarkdown(entries []CostEntry) string {
	g, ok := CostGrid(entries)
	if !ok {
		return ""
	}
	return g.Markdown()
}
