package model

import (
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/gomlx"
)

// BenchmarkPoolCNN4 times cnn4's first max-pooling layer alone (batch 32: a 24×24×32
// convolution output), forward and forward plus backward, on one thread: go test ./model
// -run '^$' -bench PoolCNN4 -cpu 1.
func BenchmarkPoolCNN4(b *testing.B) {
	single, _ := SingleThreaded("")
	be, err := gomlx.Get(single)
	if err != nil {
		b.Fatal(err)
	}
	l := layer{kind: layerConv, h: 28, w: 28, cin: 1, cout: 32, k: 5}
	for _, part := range []string{"fwd", "fwd+bwd"} {
		e, err := graph.NewExec(be, func(inputs []*graph.Node) []*graph.Node {
			z, dOut := inputs[0], inputs[1]
			out, c := poolForward(z, 32, 1, l)
			if part == "fwd" {
				return []*graph.Node{out}
			}
			return []*graph.Node{out, poolBackward(dOut, l, c)}
		})
		if err != nil {
			b.Fatal(err)
		}
		zd := make([]float32, 32*24*24*32)
		for i := range zd {
			zd[i] = float32(i%13) - 6
		}
		z := tensors.FromFlatDataAndDimensions(zd, 32*24*24, 32)
		d := tensors.FromFlatDataAndDimensions(make([]float32, 32*12*12*32), 32, 12, 12, 32)
		b.Run(part, func(b *testing.B) {
			for range b.N {
				outs, err := e.Exec(z, d)
				if err != nil {
					b.Fatal(err)
				}
				finalize(outs...)
			}
		})
	}
}
