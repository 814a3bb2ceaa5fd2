package pipeline

import (
	"context"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/remote"
)

// backoff paces a worker that waits for stages other workers hold (executeSplit): the
// first wait is base, each further one twice the last, up to limit; reset starts again
// from base once something changed. Each wait is drawn at random from its upper half
// (between d/2 and d), so that workers started together do not poll the remote in step.
// The jitter only moves when a worker looks, never what it computes.
type backoff struct {
	base, limit time.Duration
	cur         time.Duration // the last nominal wait; 0 before the first
}

// next returns the next wait.
func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.base
	} else {
		b.cur = min(2*b.cur, max(b.limit, b.base))
	}
	return remote.Jitter(b.cur)
}

// reset makes the next wait base again.
func (b *backoff) reset() { b.cur = 0 }

// sleepCtx waits d, or until ctx ends (returning its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
