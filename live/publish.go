package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// ProgressDir is the folder of a store directory that holds its journals, one file
// <key>.json per train stage. Badger ignores it and snapshots (artifacts.OpenReader) do not
// copy folders.
const ProgressDir = "progress"

// Write intervals: the local file is rewritten at most every LocalEvery, the remote object
// at most every RemoteEvery; the last state is always written when the stage ends.
const (
	LocalEvery  = 200 * time.Millisecond
	RemoteEvery = 5 * time.Second
	// flushTimeout bounds End's wait for the last writes (a remote that does not answer).
	flushTimeout = 10 * time.Second
)

// Path is the journal file of stage key in store directory dir.
func Path(dir, key string) string { return filepath.Join(dir, ProgressDir, key+".json") }

// Options configures a Publisher.
type Options struct {
	// Dir is the store directory whose progress folder receives the journal ("": none).
	Dir string
	// Remote, when set, stores the journal on the remote (a put that replaces it whole).
	Remote func(ctx context.Context, data []byte) error
	// Key, Name and Rounds describe the stage (Journal).
	Key, Name string
	Rounds    int
	// Holder names this process (default host:pid); TookOverFrom, the holder replaced.
	Holder, TookOverFrom string
	// Leased: the stage runs under a worker's lease of the remote (Journal.Leased), whose
	// lifetime is LeaseTTL.
	Leased   bool
	LeaseTTL time.Duration
	// Logf receives the first failure to write the journal, and nothing else (may be nil).
	Logf func(format string, args ...any)
	// LocalEvery and RemoteEvery override the write intervals (0: the defaults).
	LocalEvery, RemoteEvery time.Duration
}

// A Publisher keeps one stage's journal and writes it in the background: recording a
// round only copies a few numbers under a mutex, so the stage never waits for a disk or a
// remote. Its methods are safe for concurrent use, and do nothing on a nil Publisher.
type Publisher struct {
	o     Options
	start time.Time

	mu sync.Mutex
	j  Journal
	// prev is the journal an earlier run of the stage left in Dir (nil: none), whose
	// points up to a checkpoint Resumed carries over; offset is their wall time.
	prev   *Journal
	offset float64
	dirty  bool
	ended  bool

	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	warned bool
}

// Start begins a journal in state Running and writes it at once.
func Start(o Options) *Publisher {
	host, _ := os.Hostname()
	if o.Holder == "" {
		o.Holder = host + ":" + strconv.Itoa(os.Getpid())
	}
	if o.LocalEvery <= 0 {
		o.LocalEvery = LocalEvery
	}
	if o.RemoteEvery <= 0 {
		o.RemoteEvery = RemoteEvery
	}
	now := time.Now()
	p := &Publisher{o: o, start: now, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		j: Journal{Key: o.Key, Name: o.Name, Rounds: o.Rounds, State: Running, Holder: o.Holder, Host: host,
			PID: os.Getpid(), Leased: o.Leased, LeaseTTL: o.LeaseTTL.Seconds(), TookOverFrom: o.TookOverFrom, Started: now, Updated: now, Points: []Point{}}}
	if o.Dir != "" {
		if b, err := os.ReadFile(Path(o.Dir, o.Key)); err == nil {
			if old, err := Decode(b); err == nil && old.Key == o.Key {
				p.prev = old
			}
		}
	}
	p.dirty = true
	go p.loop()
	p.poke()
	return p
}

func (p *Publisher) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Resumed records that the stage continued from a checkpoint after round.
func (p *Publisher) Resumed(round int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.j.ResumedFrom, p.dirty = round, true
	// The curve so far: the points the interrupted run published up to the checkpoint,
	// and the wall time they took, carried on.
	if len(p.j.Points) == 0 && p.prev != nil {
		for _, pt := range p.prev.Points {
			if pt.Round <= round {
				p.j.Points = append(p.j.Points, pt)
				p.offset = pt.Seconds
			}
		}
	}
	p.mu.Unlock()
	p.poke()
}

// Round records one finished round; Seconds is filled in from the stage's start.
func (p *Publisher) Round(pt Point) {
	if p == nil {
		return
	}
	now := time.Now()
	p.mu.Lock()
	pt.Seconds = p.offset + now.Sub(p.start).Seconds()
	if !p.ended {
		p.j.add(pt)
		p.j.Updated, p.dirty = now, true
	}
	p.mu.Unlock()
	p.poke()
}

// End marks the journal Finished (err nil), Interrupted (a cancelled context) or Failed,
// writes it, and waits a bounded time for the writes.
func (p *Publisher) End(err error) {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		return
	}
	p.ended = true
	switch {
	case err == nil:
		p.j.State = Finished
	case errors.Is(err, context.Canceled):
		p.j.State = Interrupted
	default:
		p.j.State, p.j.Error = Failed, err.Error()
	}
	p.j.Updated, p.dirty = time.Now(), true
	p.mu.Unlock()
	close(p.stop)
	select {
	case <-p.done:
	case <-time.After(flushTimeout):
	}
}

// loop writes the journal whenever it changed, at most every LocalEvery (the remote at
// most every RemoteEvery), and a last time when End is called.
func (p *Publisher) loop() {
	defer close(p.done)
	var lastRemote time.Time
	var pending []byte // the newest journal the remote has not received
	flush := func(final bool) {
		if data, ok := p.take(); ok {
			p.writeLocal(data)
			if p.o.Remote != nil {
				pending = data
			}
		}
		if pending != nil && (final || time.Since(lastRemote) >= p.o.RemoteEvery) {
			lastRemote = time.Now()
			p.writeRemote(pending)
			pending = nil
		}
	}
	for {
		select {
		case <-p.kick:
			flush(false)
		case <-p.stop:
			flush(true)
			return
		}
		select {
		case <-time.After(p.o.LocalEvery):
			p.mu.Lock()
			again := p.dirty || pending != nil
			p.mu.Unlock()
			if again {
				p.poke()
			}
		case <-p.stop:
			flush(true)
			return
		}
	}
}

// take encodes the journal if it changed since the last take.
func (p *Publisher) take() ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.dirty {
		return nil, false
	}
	p.dirty = false
	p.j.Seq++
	b, _ := json.Marshal(&p.j) // plain data: never fails
	return b, true
}

// writeLocal replaces the journal file whole (a temporary file renamed over it), so a
// reader sees the previous journal or this one.
func (p *Publisher) writeLocal(data []byte) {
	if p.o.Dir == "" {
		return
	}
	path := Path(p.o.Dir, p.o.Key)
	err := os.MkdirAll(filepath.Dir(path), 0o777)
	if err == nil {
		tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
		if err = os.WriteFile(tmp, data, 0o666); err == nil {
			if err = os.Rename(tmp, path); err != nil {
				os.Remove(tmp)
			}
		}
	}
	p.warn(err)
}

func (p *Publisher) writeRemote(data []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	p.warn(p.o.Remote(ctx, data))
}

// warn logs the first failure to publish: progress is a convenience and never fails a stage.
func (p *Publisher) warn(err error) {
	if err == nil || p.warned || p.o.Logf == nil {
		return
	}
	p.warned = true
	p.o.Logf("progress of %s not published: %v (the stage goes on)", p.o.Name, err)
}
