package gomlx

import (
	"fmt"
	"testing"
)

// BenchmarkCNN4 reports training and inference throughput of cnn4 (batch 32) on the default
// backend for MNIST-sized and CIFAR-sized inputs. Run with
// go test ./gomlx -run '^$' -bench CNN4 -benchtime 1x.
func BenchmarkCNN4(b *testing.B) {
	for _, c := range []struct{ hw, channels int }{{28, 1}, {32, 3}} {
		b.Run(fmt.Sprintf("%dx%dx%d", c.hw, c.hw, c.channels), func(b *testing.B) {
			for range b.N {
				train, infer, err := BenchCNN4("", c.hw, c.channels, 32, 60)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(train, "train_samples/s")
				b.ReportMetric(infer, "infer_samples/s")
			}
		})
	}
}
