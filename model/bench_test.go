package model

import (
	"fmt"
	"testing"
)

// BenchmarkCNN4 reports training and inference throughput of cnn4 (batch 32) on the default
// backend for MNIST-sized and CIFAR-sized inputs. Run with
// go test ./model -run '^$' -bench CNN4 -benchtime 1x.
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

// BenchmarkResNet18 reports ResNet-18 (CIFAR variant) training throughput at batch 32 on
// 32×32×3. Run with go test ./model -run '^$' -bench ResNet18 -benchtime 1x.
func BenchmarkResNet18(b *testing.B) {
	spec := ModelSpec{Arch: ArchResNet18, InputShape: []int{32, 32, 3}, NumClasses: 10}
	for range b.N {
		train, infer, err := BenchModel("", spec, 32, 3)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(train, "train_samples/s")
		b.ReportMetric(infer, "infer_samples/s")
	}
}
