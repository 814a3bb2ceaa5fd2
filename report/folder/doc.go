// Package folder writes a built report (report/site) into its folder: the HTML page and
// markdown, each figure in every format asked for, the figures' and tables' numbers as
// Parquet and CSV, with --latex the LaTeX table and figures, and the stages' own tables as
// `fedpipe export` writes them (results/export). While it writes, the folder holds
// IncompleteMarker, so that a report stopped midway is not taken for a whole one.
package folder
