package pipeline

import (
	"context"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/manifest"
)

// leasedKey marks, for runStage, a stage run under a worker's lease; its value is the holder
// whose expired lease was taken over ("": a fresh claim).
type leasedKey struct{}

// withLease returns ctx marked as running under a lease taken over from prev ("": none).
func withLease(ctx context.Context, prev string) context.Context {
	return context.WithValue(ctx, leasedKey{}, prev)
}

// fenceKey carries, for runStage, the *remote.Lease a worker runs the stage under: every
// write of the stage to the remote goes through it (push, pushCheckpoint), so a worker that
// lost the lease writes nothing.
type fenceKey struct{}

// withFence returns ctx carrying the lease l.
func withFence(ctx context.Context, l *remote.Lease) context.Context {
	return context.WithValue(ctx, fenceKey{}, l)
}

// fenceOf is the lease ctx carries (nil: none).
func fenceOf(ctx context.Context) *remote.Lease {
	l, _ := ctx.Value(fenceKey{}).(*remote.Lease)
	return l
}

// startJournal starts the progress journal of a train stage about to run (package live): in
// the store's directory and, with a remote, on the remote; nil for other stages or with
// NoJournal. The journal is no input of anything: keys and results never see it.
func (e *Executor) startJournal(ctx context.Context, n *Node) *live.Publisher {
	if e.NoJournal || n.Kind != manifest.KindTrain || n.Run == nil {
		return nil
	}
	o := live.Options{Dir: e.Store.Dir(), Key: n.Key.String(), Name: n.Name, Rounds: n.Run.Train.Rounds}
	if e.Progress != nil {
		o.Logf = e.Progress.Logf
	}
	if r := e.Remote; r != nil {
		key := artifacts.Digest(n.Key)
		o.Holder = r.Holder()
		o.Remote = func(ctx context.Context, data []byte) error { return r.PutProgress(ctx, key, data) }
	}
	if prev, ok := ctx.Value(leasedKey{}).(string); ok {
		o.Leased, o.TookOverFrom = true, prev
		if e.Remote != nil {
			o.LeaseTTL = e.Remote.LeaseTTL()
		}
	}
	return live.Start(o)
}

// Publish records one round of the stage in its progress journal (nothing when it has
// none). The train stage calls it through live.Recorder.
func (sc *StageContext) Publish(p live.Point) { sc.live.Round(p) }

var _ live.Recorder = (*StageContext)(nil)
