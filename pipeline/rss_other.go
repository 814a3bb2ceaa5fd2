//go:build !unix

package pipeline

// PeakRSS is the process's peak resident set size in bytes; 0: not measured on this
// system.
func PeakRSS() int64 { return 0 }
