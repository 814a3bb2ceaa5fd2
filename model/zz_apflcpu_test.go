package model

import (
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZAPFLCPU(t *testing.T) {
	arch := os.Getenv("ZZARCH")
	if arch == "" {
		t.Skip()
	}
	batch := 32
	if arch == "fedavgcnn" {
		batch = 64
	}
	spec := ModelSpec{Arch: arch, InputShape: []int{28, 28, 1}, NumClasses: 10}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := rand.New(rand.NewPCG(3, 3))
	x, y := randomData(r, batch, 28*28, 10)
	w, v := spec.Init(1), spec.Init(2)
	opt := SGD{LR: 0.01, Momentum: 0.7}
	if arch == "fedavgcnn" {
		opt.Momentum = 0
	}
	kinds := []string{"fedavg", "paper", "flbench", "flbench-sum"}
	steps := map[string]func() error{}
	for _, kind := range kinds {
		switch kind {
		case "fedavg":
			s, _ := m.NewSession(w, opt)
			defer s.Close()
			steps[kind] = func() error { _, err := s.Step(x, y); return err }
		default:
			vr := APFLParamMix
			if kind != "paper" {
				vr = APFLOutputMix
			}
			s, _ := m.NewAPFLSession(vr, w, v, opt)
			defer s.Close()
			sum := kind != "flbench"
			steps[kind] = func() error { _, err := s.Step(x, y, 0.5, sum); return err }
		}
		for range 3 {
			steps[kind]()
		}
	}
	tot := map[string]time.Duration{}
	const N = 25
	for rep := 0; rep < 6; rep++ {
		for _, kind := range kinds {
			c0 := cpuNow()
			for range N {
				if err := steps[kind](); err != nil {
					t.Fatal(err)
				}
			}
			tot[kind] += cpuNow() - c0
		}
	}
	for _, kind := range kinds {
		fmt.Printf("%s %s: %.2f ms CPU a step, %.3f x fedavg\n", arch, kind, float64(tot[kind].Microseconds())/1e3/(6*N), float64(tot[kind])/float64(tot["fedavg"]))
	}
}
