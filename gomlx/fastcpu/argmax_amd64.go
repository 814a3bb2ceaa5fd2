package fastcpu

import "golang.org/x/sys/cpu"

// argMaxAVX2 is the assembly ArgMax of argExtreme over n values (a multiple of 8) of red
// rows stride elements apart.
//
//go:noescape
func argMaxAVX2(n int, src *float32, stride int, red int, arg *int32)

// hasArgMaxAVX2 reports whether argMaxAVX2 can run here.
var hasArgMaxAVX2 = cpu.X86.HasAVX2
