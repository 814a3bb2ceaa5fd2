package model

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// SideBySide calls fn(i, m) for every i in [0, n), on one goroutine per model of models,
// each goroutine passing its own model: several clients on several single-threaded models
// (see SingleThreaded) at the same time. With one model (or n < 2) the calls run in order on
// the calling goroutine, and the first error stops them. It returns the error of the lowest
// i that failed (a panic in fn becomes an error) or ctx's error if it was cancelled; no call
// starts after cancellation.
func SideBySide(ctx context.Context, models []*Model, n int, fn func(i int, m *Model) error) error {
	errs := make([]error, n)
	call := func(i int, m *Model) {
		defer func() {
			if r := recover(); r != nil {
				errs[i] = fmt.Errorf("panic: %v", r)
			}
		}()
		errs[i] = fn(i, m)
	}
	if len(models) < 2 || n < 2 {
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if call(i, models[0]); errs[i] != nil {
				return errs[i]
			}
		}
		return nil
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, m := range models[:min(len(models), n)] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				call(i, m)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
