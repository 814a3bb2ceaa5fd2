package gomlx

// MACs returns, per weight tensor (by name), the multiply-accumulate operations one
// sample's forward pass spends on it: a convolution oh·ow·k·k·cin·cout (its output
// positions times the kernel volume), a dense layer in·out. Biases, activations and
// pooling are not counted.
func (s ModelSpec) MACs() (map[string]int64, error) {
	ls, err := s.layers()
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(ls))
	for _, l := range ls {
		switch l.kind {
		case layerConv:
			oh, ow := l.h-l.k+1, l.w-l.k+1
			out[l.name+".weight"] = int64(oh) * int64(ow) * int64(l.k*l.k*l.cin) * int64(l.cout)
		case layerFC:
			out[l.name+".weight"] = int64(l.in) * int64(l.out)
		}
	}
	return out, nil
}
