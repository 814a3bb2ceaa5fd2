package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fedpipe/fedpipe/results/listing"
)

func writeEvalsCSV(w io.Writer, rows []lsRow) error {
	multi := listing.MultiManifest(rows)
	h := []string{"label", "round", "pooled_pct", "pooled_ft_pct", "client_mean_pct", "client_mean_ft_pct"}
	if multi {
		h = append([]string{"manifest"}, h...)
	}
	cw := csv.NewWriter(w)
	_ = cw.Write(h)
	full := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range rows {
		for _, e := range r.Evals {
			_ = cw.Write(listing.EvalCells(r, e, multi, full))
		}
	}
	cw.Flush()
	if cw.Error() != nil {
		return exitErr(exitFailure)
	}
	return nil
}

func writeEvalsTable(w io.Writer, rows []lsRow) {
	multi := listing.MultiManifest(rows)
	h := []string{"label", "round", "pooled %", "after FT", "client mean %", "after FT"}
	if multi {
		h = append([]string{"manifest"}, h...)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(h, "\t"))
	evals, runs := 0, 0
	two := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for _, r := range rows {
		if len(r.Evals) > 0 {
			runs++
		}
		for _, e := range r.Evals {
			c := listing.EvalCells(r, e, multi, two)
			for i, v := range c {
				if v == "" {
					c[i] = "-"
				}
			}
			fmt.Fprintln(tw, strings.Join(c, "\t"))
			evals++
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%d evaluations of %d cached runs (%d runs listed)\n", evals, runs, len(rows))
}
