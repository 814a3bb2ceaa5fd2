// Package stats holds the statistics fedpipe reports beside an accuracy: the summary of a
// metric over seeds (mean, sample standard deviation, Student-t 95 % interval), the test-set
// sampling interval of one run (Wilson for pooled accuracy, a seeded bootstrap over clients for
// the client mean), paired comparisons of two methods (across seeds: an exact sign-flip
// permutation test; across clients: the Wilcoxon signed-rank test), and Holm's correction for
// several comparisons. Pure Go, no state: the same inputs give the same bits. Nothing here
// enters a cache key; docs/statistics.md says what each number means and when not to trust it.
package stats
