package model

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// twoModels returns two distinct (never compiled) models: SideBySide only hands them out.
func twoModels() []*Model { return []*Model{{}, {}} }

func TestSideBySideOrderStartsInOrder(t *testing.T) {
	// order puts 3 and 2 first. They wait for each other, so a call of 0 or 1 can only start
	// after both have started when the order is followed; in index order 0 and 1 start first.
	var mu sync.Mutex
	started := map[int]bool{}
	both := make(chan struct{})
	var calls []int
	err := SideBySideOrder(context.Background(), twoModels(), 4, []int{3, 2, 1, 0}, func(i int, _ *Model) error {
		mu.Lock()
		started[i] = true
		calls = append(calls, i)
		ready := started[2] && started[3]
		mu.Unlock()
		switch i {
		case 2, 3:
			if ready {
				close(both)
			}
			select {
			case <-both:
			case <-time.After(10 * time.Second):
				return fmt.Errorf("call %d: the other large call never started", i)
			}
		default:
			if !ready {
				return fmt.Errorf("call %d started before calls 3 and 2", i)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(calls)
	if !slices.Equal(calls, []int{0, 1, 2, 3}) {
		t.Fatalf("calls %v, want each of 0..3 once", calls)
	}
}

func TestSideBySideOrderErrors(t *testing.T) {
	ctx := context.Background()
	if err := SideBySideOrder(ctx, twoModels(), 3, []int{0, 1}, func(int, *Model) error { return nil }); err == nil {
		t.Fatal("an order of the wrong length was accepted")
	}
	// The lowest failing index is reported whatever the order.
	err := SideBySideOrder(ctx, twoModels(), 6, []int{5, 4, 3, 2, 1, 0}, func(i int, _ *Model) error {
		if i == 1 || i == 4 {
			return fmt.Errorf("fail %d", i)
		}
		return nil
	})
	if err == nil || err.Error() != "fail 1" {
		t.Fatalf("error %v, want fail 1", err)
	}
	// One model: index order, stopping at the first error.
	var calls []int
	err = SideBySideOrder(ctx, []*Model{{}}, 4, []int{3, 2, 1, 0}, func(i int, _ *Model) error {
		calls = append(calls, i)
		if i == 1 {
			return errors.New("stop")
		}
		return nil
	})
	if err == nil || !slices.Equal(calls, []int{0, 1}) {
		t.Fatalf("one model: calls %v, error %v; want [0 1] and stop", calls, err)
	}
}

func TestLargestFirst(t *testing.T) {
	sizes := []int{5, 9, 1, 9, 3}
	got := LargestFirst(len(sizes), func(i int) int { return sizes[i] })
	if want := []int{1, 3, 0, 4, 2}; !slices.Equal(got, want) {
		t.Fatalf("LargestFirst = %v, want %v", got, want)
	}
}

// makespan is when the last of 2 workers, each taking the next job as it frees up, ends.
func makespan(jobs []int) int {
	var w [2]int
	for _, j := range jobs {
		if w[0] <= w[1] {
			w[0] += j
		} else {
			w[1] += j
		}
	}
	return max(w[0], w[1])
}

// TestLargestFirstBalances draws 100 clients with very uneven sizes (1 + 100·u³ batches, u
// uniform), samples 10 per round for 400 rounds and compares how long 2 workers take in
// index order and in LargestFirst order, against the even share.
func TestLargestFirstBalances(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := make([]int, 100)
	for i := range sizes {
		u := r.Float64()
		sizes[i] = 1 + int(100*u*u*u) // batches
	}
	var even, index, lpt float64
	for range 400 {
		sampled := r.Perm(len(sizes))[:10]
		slices.Sort(sampled)
		jobs := make([]int, len(sampled))
		total := 0
		for k, c := range sampled {
			jobs[k] = sizes[c]
			total += jobs[k]
		}
		even += float64(total) / 2
		index += float64(makespan(jobs))
		order := LargestFirst(len(jobs), func(k int) int { return jobs[k] })
		sorted := make([]int, len(jobs))
		for k, i := range order {
			sorted[k] = jobs[i]
		}
		lpt += float64(makespan(sorted))
	}
	t.Logf("time over the even share: index order %.3f, largest first %.3f", index/even, lpt/even)
	if lpt > index || lpt/even > 1.03 {
		t.Fatalf("largest first %.3f of the even share, index order %.3f", lpt/even, index/even)
	}
}
