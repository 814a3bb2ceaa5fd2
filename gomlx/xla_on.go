//go:build xla

package gomlx

import "github.com/gomlx/gomlx/backends/xla"

// XLACompiled reports whether this binary carries GoMLX's XLA backend (build tag xla).
const XLACompiled = true

func init() {
	// Never download plugins: they are found on the machine (package xlaenv) or not at all.
	xla.EnableAutoInstall(false)
}
