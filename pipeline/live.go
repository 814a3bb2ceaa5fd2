package pipeline

import (
	"context"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/manifest"
)

// tookOverKey carries, into runStage, the holder whose expired lease a worker took over.
type tookOverKey struct{}

// withTookOver returns ctx carrying prev, the holder a lease was taken over from ("": none).
func withTookOver(ctx context.Context, prev string) context.Context {
	if prev == "" {
		return ctx
	}
	return context.WithValue(ctx, tookOverKey{}, prev)
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
	if prev, ok := ctx.Value(tookOverKey{}).(string); ok {
		o.TookOverFrom = prev
	}
	return live.Start(o)
}

// Publish records one round of the stage in its progress journal (nothing when it has
// none). The train stage calls it through live.Recorder.
func (sc *StageContext) Publish(p live.Point) { sc.live.Round(p) }

var _ live.Recorder = (*StageContext)(nil)
