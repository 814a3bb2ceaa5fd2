// Package export writes a manifest's cached tables out of the store: every table of every
// stage as Arrow (Feather v2), Parquet and CSV files in a folder per stage, and the
// report stage's markdown report (Tables); WriteTable and WriteFile are how `fedpipe export`
// and `fedpipe report` write each file (atomically, temporary file then rename). What a
// table carries besides its stored columns (the run's identity, test-set intervals) is
// the caller's (Layout.Decorate).
package export
