package bench

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"strings"
)

// A Go CPU profile (runtime/pprof's gzipped profile.proto), read just far enough to
// attribute each sample's CPU time to a stage of the round by its stack: the decoder below
// reads the sample, location, function and string-table fields and skips the rest.

// profileStages are the stages a sample is attributed to, in print order.
var profileStages = []string{"GEMM", "graph ops", "method code", "train loop", "model I/O", "GC+alloc", "other"}

// stageOf attributes a stack (leaf first, function names) to a stage: the GEMM kernels
// where the leaf is in package gemm; the other graph ops where a frame is in the backend's
// executors; the garbage collector and allocator; the method's own Go code
// (stages/train/methods), the federated loop (stages/train) and the model's copies of
// parameters in and out (package model) by the innermost frame of those packages.
func stageOf(stack []string) string {
	if len(stack) == 0 {
		return "other"
	}
	if strings.Contains(stack[0], "/gomlx/gemm.") {
		return "GEMM"
	}
	for _, f := range stack {
		switch {
		case strings.HasPrefix(f, "runtime.gcBgMarkWorker"), strings.HasPrefix(f, "runtime.mallocgc"), strings.HasPrefix(f, "runtime.gcAssist"),
			strings.HasPrefix(f, "runtime.bgsweep"), strings.HasPrefix(f, "runtime.memclrNoHeapPointers"):
			return "GC+alloc"
		case strings.Contains(f, "/gomlx/fastcpu.") || strings.Contains(f, "backends/simplego."):
			return "graph ops"
		case strings.Contains(f, "/stages/train/methods."):
			return "method code"
		case strings.Contains(f, "/stages/train."):
			return "train loop"
		case strings.Contains(f, "fedpipe/model."):
			return "model I/O"
		}
	}
	return "other"
}

// profileStageSeconds returns the CPU seconds of a gzipped CPU profile by stage (stageOf).
func profileStageSeconds(gz []byte) (map[string]float64, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	type sample struct {
		locs   []uint64
		values []int64
	}
	var samples []sample
	locFuncs := map[uint64][]uint64{} // location → function ids, inlined first
	funcNames := map[uint64]int64{}   // function → string index
	var strs []string
	err = eachField(b, func(field int, wire int, v uint64, data []byte) error {
		switch field {
		case 2: // sample
			var s sample
			err := eachField(data, func(f, w int, v uint64, d []byte) error {
				switch {
				case f == 1 && w == 2:
					s.locs = append(s.locs, packed(d)...)
				case f == 1:
					s.locs = append(s.locs, v)
				case f == 2 && w == 2:
					for _, u := range packed(d) {
						s.values = append(s.values, int64(u))
					}
				case f == 2:
					s.values = append(s.values, int64(v))
				}
				return nil
			})
			samples = append(samples, s)
			return err
		case 4: // location
			var id uint64
			var fns []uint64
			err := eachField(data, func(f, _ int, v uint64, d []byte) error {
				switch f {
				case 1:
					id = v
				case 4: // line
					return eachField(d, func(f, _ int, v uint64, _ []byte) error {
						if f == 1 {
							fns = append(fns, v)
						}
						return nil
					})
				}
				return nil
			})
			locFuncs[id] = fns
			return err
		case 5: // function
			var id uint64
			var name int64
			err := eachField(data, func(f, _ int, v uint64, _ []byte) error {
				switch f {
				case 1:
					id = v
				case 2:
					name = int64(v)
				}
				return nil
			})
			funcNames[id] = name
			return err
		case 6:
			strs = append(strs, string(data))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range samples {
		if len(s.values) < 2 {
			continue
		}
		var stack []string
		for _, l := range s.locs {
			for _, f := range locFuncs[l] {
				if k := funcNames[f]; k >= 0 && int(k) < len(strs) {
					stack = append(stack, strs[k])
				}
			}
		}
		out[stageOf(stack)] += float64(s.values[1]) / 1e9 // cpu nanoseconds
	}
	return out, nil
}

// packed decodes a packed run of varints.
func packed(d []byte) []uint64 {
	var out []uint64
	for len(d) > 0 {
		v, n := binary.Uvarint(d)
		if n <= 0 {
			break
		}
		out = append(out, v)
		d = d[n:]
	}
	return out
}

var errProto = errors.New("bench: malformed profile")

// eachField calls fn for each field of a protobuf message: varints with v, length-delimited
// fields with data; fixed-width fields are skipped.
func eachField(b []byte, fn func(field, wire int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errProto
		}
		b = b[n:]
		field, wire := int(key>>3), int(key&7)
		switch wire {
		case 0:
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return errProto
			}
			b = b[n:]
			if err := fn(field, wire, v, nil); err != nil {
				return err
			}
		case 1:
			if len(b) < 8 {
				return errProto
			}
			b = b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return errProto
			}
			d := b[n : n+int(l)]
			b = b[n+int(l):]
			if err := fn(field, wire, 0, d); err != nil {
				return err
			}
		case 5:
			if len(b) < 4 {
				return errProto
			}
			b = b[4:]
		default:
			return errProto
		}
	}
	return nil
}
