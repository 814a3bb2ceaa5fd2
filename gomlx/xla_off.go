//go:build !xla

package gomlx

// XLACompiled reports whether this binary carries GoMLX's XLA backend (build tag xla).
const XLACompiled = false
