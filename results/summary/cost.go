package summary

import (
	"fmt"
	"strconv"
)

// Cost is one run's mean cost per client over the whole run (DM-PFL Table 4).
type Cost struct {
	MBUp, MBDown float64 // megabytes (10^6 bytes)
	FLOPs        float64 // training FLOPs
	// Reference: the run's method is the one the others' costs are stated as multiples of
	// (its registration's manifest.MethodDef.CostReference: FedAvg).
	Reference bool
}

// CostOf reads a run's cost from its evaluate summary table's metadata (mb_up, mb_down,
// flops; see results.Summary); false when the summary carries none. reference says
// whether the run's method is the cost reference (Cost.Reference).
func CostOf(meta map[string]string, reference bool) (Cost, bool) {
	if _, ok := meta["flops"]; !ok {
		return Cost{}, false
	}
	f := func(k string) float64 {
		v, _ := strconv.ParseFloat(meta[k], 64)
		return v
	}
	return Cost{MBUp: f("mb_up"), MBDown: f("mb_down"), FLOPs: f("flops"), Reference: reference}, true
}

// CostGrid lays communication and computation per client out beside FedAvg's (DM-PFL
// Table 4): one row per configuration (seeds averaged) with MB up, MB down and training
// FLOPs, each also as a multiple of the first reference configuration's (CostEntry.Reference:
// FedAvg) when there is one. It reads the entries with a cost (Entry.Cost); false when
// there are none.
func CostGrid(entries []Entry) (Grid, bool) {
	type agg struct {
		reference          bool
		up, down, flops, n float64
	}
	var order []string
	display := map[string]string{} // config → its printed form
	rows := map[string]*agg{}
	for _, e := range entries {
		if e.Cost == nil {
			continue
		}
		a := rows[e.Config]
		if a == nil {
			a = &agg{reference: e.Cost.Reference}
			rows[e.Config] = a
			order = append(order, e.Config)
			display[e.Config] = e.Config
			if e.Display != "" {
				display[e.Config] = e.Display
			}
		}
		a.up += e.Cost.MBUp
		a.down += e.Cost.MBDown
		a.flops += e.Cost.FLOPs
		a.n++
	}
	if len(order) == 0 {
		return Grid{}, false
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
