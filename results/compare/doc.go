// Package compare is `fedpipe diff`'s comparison of two sides (two manifests, two grid
// cells, or a manifest's last recorded run and now): the parameters that differ, the runs
// paired by label or seed with their metrics side by side, and the paired comparison of B
// against A over seeds and over clients (package stats), read from the store through
// results/listing and results.Read; with the JSON shape and the text tables diff prints.
// It runs nothing.
package compare
