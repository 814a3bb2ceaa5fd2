package model

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time (user and system) this process has used: on a shared machine
// a ratio of CPU times moves far less with the load than one of wall times.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAPFLStep times APFL's compiled steps (APFLSession) beside a plain training step
// on the same batch, alternately, and reports each as a multiple of the plain step's CPU
// time: "paper" (the parameter mixture), "flbench" (the output mixture, α fixed) and
// "flbench-alpha" (with α's sum, as in the first local epoch). Two trainings imply 2.
//
//	go test -run - -bench APFLStep ./model/
func BenchmarkAPFLStep(b *testing.B) {
	for _, arch := range []string{"cnn4", "fedavgcnn"} {
		b.Run(arch, func(b *testing.B) {
			batch, opt := 32, SGD{LR: 0.01, Momentum: 0.7}
			if arch == "fedavgcnn" {
				batch, opt = 64, SGD{LR: 0.01}
			}
			spec := ModelSpec{Arch: arch, InputShape: []int{28, 28, 1}, NumClasses: 10}
			m, err := NewModel("", spec)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			x, y := randomData(rand.New(rand.NewPCG(3, 3)), batch, 28*28, 10)
			w, v := spec.Init(1), spec.Init(2)
			kinds := []string{"plain", "paper", "flbench", "flbench-alpha"}
			steps := map[string]func() error{}
			for _, kind := range kinds {
				if kind == "plain" {
					s, err := m.NewSession(w, opt)
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					steps[kind] = func() error { _, err := s.Step(x, y); return err }
					continue
				}
				mix := APFLParamMix
				if kind != "paper" {
					mix = APFLOutputMix
				}
				s, err := m.NewAPFLSession(mix, w, v, opt)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				sum := kind != "flbench"
				steps[kind] = func() error { _, err := s.Step(x, y, 0.5, sum); return err }
			}
			for _, kind := range kinds { // compile and warm up
				if err := steps[kind](); err != nil {
					b.Fatal(err)
				}
			}
			cpu := map[string]time.Duration{}
			b.ResetTimer()
			for range b.N {
				for _, kind := range kinds {
					c0 := processCPU()
					if err := steps[kind](); err != nil {
						b.Fatal(err)
					}
					cpu[kind] += processCPU() - c0
				}
			}
			for _, kind := range kinds[1:] {
				b.ReportMetric(float64(cpu[kind])/float64(cpu["plain"]), kind+"-x-plain")
			}
		})
	}
}
