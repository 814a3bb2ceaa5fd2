package train

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
)

// lockstepClients is a small CNN on tinyImages' clients, each with its own Local.
func lockstepClients(t *testing.T, clients int) (*model.Model, []*Local, model.ModelSpec) {
	t.Helper()
	ds, a := tinyImages(clients*20, 16, clients)
	spec := model.ModelSpec{Arch: model.ArchCNN4, InputShape: ds.Shape, NumClasses: ds.Classes}
	m, err := model.NewModel(model.CPUBackend, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	cs := clientSet{d: ds, a: a}
	opt := model.SGD{LR: 0.05, Momentum: 0.5}
	var ls []*Local
	for c := range clients {
		cd := cs.train(c)
		// Uneven clients: client c keeps 15 − 4c of its 15 training samples (at least 1).
		keep := max(1, 15-4*c)
		cd.trainX, cd.trainY = cd.trainX[:keep*tensor.Size(ds.Shape)], cd.trainY[:keep]
		ls = append(ls, &Local{model: m, opt: opt, data: cd, epochs: 2, batch: 4, seed: 9, round: 1, client: c, rounds: 1})
	}
	return m, ls, spec
}

// TestLockGroupMatchesSessions trains uneven clients from their own starting points in
// lockstep (some of them twice, some with a mask, which runs alone, and one that does not train) and checks every result equals
// training the client by itself, bit for bit, and that the lockstep passes did run as one
// step for several clients.
func TestLockGroupMatchesSessions(t *testing.T) {
	const clients = 4
	_, ls, spec := lockstepClients(t, clients)
	inits := make([]tensor.List, clients)
	for c := range inits {
		inits[c] = spec.Init(uint64(3 + c))
	}
	mask := ZeroMask(inits[0])
	for _, p := range mask {
		for i := range p.Data {
			p.Data[i] = float32(i % 2)
		}
	}
	// work is client c's training: plain passes, then (even clients) a masked pass, then
	// (client 1) a second plain pass from where it got. Client 3 does not train.
	work := func(l *Local) (tensor.List, error) {
		if l.client == 3 {
			return nil, nil
		}
		p, err := l.Fit(inits[l.client], Fit{})
		if err == nil && l.client%2 == 0 {
			p, err = l.Fit(p, Fit{Mask: mask, Stream: "masked", Epochs: 1})
		}
		if err == nil && l.client == 1 {
			p, err = l.Fit(p, Fit{Stream: "again", Epochs: 1})
		}
		return p, err
	}
	want := make([]tensor.List, clients)
	for c, l := range ls {
		p, err := work(l)
		if err != nil {
			t.Fatal(err)
		}
		want[c] = p
	}
	multi, err := model.NewModel(model.CPUBackend, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer multi.Close()
	group := newLockGroup(context.Background(), multi, ls[0].opt)
	got := make([]tensor.List, clients)
	before := lockstepSteps.Load()
	err = group.run(clients, func(i int) error {
		l := *ls[i]
		l.group = group
		p, err := work(&l)
		got[i] = p
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for c := range clients {
		if !reflect.DeepEqual(got[c], want[c]) {
			t.Errorf("client %d: lockstep result differs from its own session's", c)
		}
	}
	// Three clients' first passes share steps: client 0 has 15 samples, so 2 epochs of 4
	// batches are 8 steps; client 1's later pass (1 epoch of 3 batches) runs alone.
	if steps := lockstepSteps.Load() - before; steps != 8+3 {
		t.Errorf("%d lockstep steps, want 11", steps)
	}
	if c := multi.Compilations()["train-multi"]; c != 2 {
		t.Errorf("%d lockstep graphs compiled, want 2 (3 clients, then 1)", c)
	}
}

// TestLockGroupFailures checks a member whose passes fail leaves the others to finish, a
// failed step fails every member, and a cancelled context stops the group.
func TestLockGroupFailures(t *testing.T) {
	_, ls, spec := lockstepClients(t, 3)
	init := spec.Init(4)
	multi, err := model.NewModel(model.CPUBackend, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer multi.Close()

	// Client 1 gives up after its second batch; the others finish with their own results.
	group := newLockGroup(context.Background(), multi, ls[0].opt)
	boom := errors.New("client 1 gives up")
	got := make([]tensor.List, 3)
	err = group.run(3, func(i int) error {
		l := *ls[i]
		l.group = group
		if i != 1 {
			p, err := l.Fit(init, Fit{})
			got[i] = p
			return err
		}
		_, err := group.train(init, func(step func([]float32, []int32) (float32, error)) error {
			batches := 0
			return l.Batches(1, "shuffle", func(_ int, x []float32, y []int32) error {
				if batches++; batches > 2 {
					return boom
				}
				_, err := step(x, y)
				return err
			})
		})
		return err
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want client 1's", err)
	}
	for _, c := range []int{0, 2} {
		want, err := ls[c].Fit(init, Fit{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[c], want) {
			t.Errorf("client %d: result differs after client 1 failed", c)
		}
	}

	// A diverging client (loss NaN: its inputs are NaN) stops with the divergence error.
	group = newLockGroup(context.Background(), multi, ls[0].opt)
	err = group.run(2, func(i int) error {
		l := *ls[i]
		l.group = group
		if i == 1 {
			l.data.trainX = append([]float32(nil), l.data.trainX...)
			for j := range l.data.trainX {
				l.data.trainX[j] = float32(math.NaN())
			}
		}
		_, err := l.Fit(init, Fit{})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Errorf("NaN inputs: %v, want a divergence error", err)
	}

	// A cancelled context fails the first step, and every member with it.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	group = newLockGroup(ctx, multi, ls[0].opt)
	err = group.run(3, func(i int) error {
		l := *ls[i]
		l.group = group
		_, err := l.Fit(init, Fit{})
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
