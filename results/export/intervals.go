package export

import (
	"io"
	"math"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/listing"
	"github.com/fedpipe/fedpipe/stats"
)

// ManifestTables writes every cached table of g's stages under out (Tables), each stage in
// its folder (StageFolders), with its run's identity (pipeline.WithIdentity) and test-set
// intervals (WithIntervals): what `fedpipe export` writes of the tables.
func ManifestTables(g *pipeline.Graph, store *artifacts.Store, out string, formats []string, skippedLog io.Writer) (files, skipped int, err error) {
	return Tables(g, store, out, formats, skippedLog, Layout{Folders: StageFolders(g), Aliases: AliasNames,
		Decorate: func(t *table.Table, n, view *pipeline.Node, name string) (bool, error) {
			identity := pipeline.WithIdentity(t, g, view)
			intervals, err := WithIntervals(t, n, name, store)
			return identity || intervals, err
		}})
}

// WithIntervals adds an evaluate stage's summary table the run's test-set intervals
// (listing.CachedIntervals) as columns, in percent; it reports whether it added any.
func WithIntervals(t *table.Table, n *pipeline.Node, output string, store *artifacts.Store) (bool, error) {
	if n.Kind != manifest.KindEvaluate || output != results.OutEvaluateSummary || t.NumRows() != 1 || t.Col(listing.IntervalHeader[0]) != nil {
		return false, nil
	}
	rows, err := results.FromTable[results.Summary](t)
	if err != nil || len(rows) != 1 {
		return false, nil
	}
	ivs, err := listing.CachedIntervals(store, n.Key.String(), rows[0])
	if err != nil {
		return false, err
	}
	for i, iv := range []*stats.Interval{ivs.Pooled, ivs.Pooled, ivs.ClientMean, ivs.ClientMean} {
		v := math.NaN() // an empty CSV field, as everywhere a value is missing
		if iv != nil {
			v = iv.Lo
			if i%2 == 1 {
				v = iv.Hi
			}
		}
		t.Columns = append(t.Columns, table.Float64Col(listing.IntervalHeader[i], []float64{v}))
	}
	return true, nil
}
