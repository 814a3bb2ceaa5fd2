package site

import (
	"fmt"
	"strconv"

	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results/summary"
)

// ProvenanceRow is one run's line of the report's provenance table: the run and the
// provenance recorded with its train stage (pipeline.Provenance; empty fields: not
// recorded).
type ProvenanceRow struct {
	Config string `json:"config" arrow:"config"`
	Seed   int64  `json:"seed" arrow:"seed"`
	pipeline.Provenance
}

// provenanceRows lists the provenance of every run whose train stage is cached.
func (c *collected) provenanceRows() []ProvenanceRow {
	var out []ProvenanceRow
	for _, x := range c.runs {
		if x.prov != nil {
			out = append(out, ProvenanceRow{Config: x.config, Seed: x.r.Seed, Provenance: *x.prov})
		}
	}
	return out
}

// provenanceGrid lays the rows out for the page: the commit cut to 12 characters, the
// train stage's wall time in seconds (over all its parts, each part's beside it) and the process's peak RSS in MiB when it ended.
func provenanceGrid(rows []ProvenanceRow) grid {
	g := grid{head: []string{"run", "seed", "fedpipe", "commit", "backend", "CPU", "threads", "train wall (s)", "peak RSS (MiB)", "date (UTC)"}, text: 6}
	or := func(s string) string {
		if s == "" {
			return "—"
		}
		return s
	}
	for _, r := range rows {
		wall := fmt.Sprintf("%.1f", r.Seconds) // the total over a run's parts, each beside it
		if parts := r.WallParts(); parts != "" {
			wall += " (" + parts + ")"
		}
		g.rows = append(g.rows, cells([]string{r.Config, strconv.FormatInt(r.Seed, 10), or(r.Version), or(r.ShortCommit()), or(r.Backend), or(r.CPU),
			or(r.ThreadsText()), wall, or(r.PeakRSSMiB()), or(r.Date)}))
	}
	return g
}

// provenanceIntro introduces the provenance section.
const provenanceIntro = "Where and how each run's training was computed, as recorded with its result: fedpipe's version and commit, the numeric backend, the CPU, the threads (GOMAXPROCS), the train stage's wall time, the fedpipe process's peak resident memory when the stage ended (the peak of the whole process so far, not of the stage alone) and the date. Data: `tables/provenance.csv`."

// addProvenance adds the provenance section, table and rows to s when any run has
// provenance, and returns the sections.
func (c *collected) addProvenance(s *Site, sections []section) []section {
	rows := c.provenanceRows()
	if len(rows) == 0 {
		return sections
	}
	s.Tables = append(s.Tables, NamedTable{"provenance", summary.DataTable(rows, nil)})
	s.Provenance = rows
	return append(sections, section{title: "Provenance", intro: provenanceIntro, grids: []grid{provenanceGrid(rows)}, details: true, collapsed: true})
}
