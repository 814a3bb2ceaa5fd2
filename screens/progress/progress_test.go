package progress

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// syncBuffer is a bytes.Buffer safe for the display's ticker goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Issue 18, bug 4: the bar fits the terminal (no line wider than its columns), shows the
// rounds done of total and an ETA, and says "interrupted" when interrupted.
func TestProgressBarFitsTheTerminal(t *testing.T) {
	var out syncBuffer
	clk := &fakeClock{t: time.Unix(0, 0)}
	p := &liveProgress{w: &out, bar: true, every: time.Hour, width: func() int { return 40 }, now: clk.now}
	name := "train fedselect variant=official alpha=0.5 seed=2"
	p.StageStart(3, 7, name)
	for r := 1; r <= 4; r++ {
		clk.add(10 * time.Second)
		p.Step(name, r, 10, fmt.Sprintf("client-mean test acc %d.0%%", 60+r))
	}
	p.StageEnd(name, 45*time.Second, fmt.Errorf("round 5: %w", context.Canceled))
	s := out.String()
	for _, seg := range strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }) {
		if n := utf8.RuneCountInString(seg); n > 39 {
			t.Errorf("a %d-column line on a 40-column terminal: %q", n, seg)
		}
	}
	if !strings.Contains(s, "round 4/10") || !strings.Contains(s, "ETA 1m0s") {
		t.Errorf("no rounds done/total or ETA:\n%q", s)
	}
	if !strings.Contains(s, "interrupted") || strings.Contains(s, "failed") {
		t.Errorf("an interrupted stage is not said to be interrupted:\n%q", s)
	}

	// On a wide terminal everything shows: bar, rounds, note, clock and ETA.
	out = syncBuffer{}
	p = &liveProgress{w: &out, bar: true, every: time.Hour, width: func() int { return 200 }, now: clk.now}
	p.StageStart(1, 1, name)
	clk.add(5 * time.Second)
	p.Step(name, 1, 4, "test acc 55.0%")
	if s := out.String(); !strings.Contains(s, "[#####...............] round 1/4 test acc 55.0%  5.0s, ETA 15.0s") {
		t.Errorf("wide bar:\n%q", s)
	}
	p.StageEnd(name, 5*time.Second, fmt.Errorf("boom"))
	if !strings.Contains(out.String(), "failed after 5.0s") {
		t.Errorf("a failure is not said to be one:\n%q", out.String())
	}
}

// The bar is redrawn on a ticker, so that its clock moves while a round runs.
func TestProgressBarRedrawsWithoutSteps(t *testing.T) {
	var out syncBuffer
	p := &liveProgress{w: &out, bar: true, every: barTick, width: func() int { return 80 }}
	p.StageStart(1, 1, "train fedavg seed=0")
	time.Sleep(3 * barTick)
	p.StageEnd("train fedavg seed=0", time.Second, nil)
	if n := strings.Count(out.String(), "\r"); n < 3 {
		t.Errorf("%d redraws in %v, want at least 3:\n%q", n, 3*barTick, out.String())
	}
}

// Not on a terminal (CI, SLURM, nohup), a long stage prints a plain progress line at most
// every 30 s, with rounds and ETA, and no carriage returns.
func TestProgressLinesWhenPiped(t *testing.T) {
	var out syncBuffer
	clk := &fakeClock{t: time.Unix(0, 0)}
	p := &liveProgress{w: &out, every: lineEvery, now: clk.now}
	p.StageStart(1, 2, "train fedavg seed=0")
	for r := 1; r <= 12; r++ {
		clk.add(10 * time.Second)
		p.Step("train fedavg seed=0", r, 12, "")
	}
	p.StageEnd("train fedavg seed=0", 2*time.Minute, nil)
	s := out.String()
	if strings.Contains(s, "\r") {
		t.Errorf("carriage returns in piped output:\n%s", s)
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	// Start, rounds 3, 6, 9 (30 s apart; round 12 ends the stage), end.
	if len(lines) != 5 || !strings.Contains(lines[1], "round 3/12") || !strings.Contains(lines[1], "ETA 1m30s") ||
		!strings.Contains(lines[4], "done in 2m0s") {
		t.Errorf("piped progress:\n%s", s)
	}
}

// Issue 46: beside the stage's ETA, the progress shows the whole sweep's, from the time per
// stage so far; none before a stage has finished, and the sweep's is dropped before the
// stage's on a narrow terminal.
func TestProgressShowsTheSweepETA(t *testing.T) {
	var out syncBuffer
	clk := &fakeClock{t: time.Unix(0, 0)}
	p := &liveProgress{w: &out, bar: true, every: time.Hour, width: func() int { return 200 }, now: clk.now}
	p.StageStart(1, 4, "partition seed=0")
	clk.add(5 * time.Second)
	p.Step("partition seed=0", 1, 2, "")
	if s := out.String(); strings.Contains(s, "sweep") {
		t.Errorf("a sweep ETA before any stage finished:\n%q", s)
	}
	clk.add(5 * time.Second)
	p.StageEnd("partition seed=0", 10*time.Second, nil)
	name := "train fedavg seed=0"
	p.StageStart(2, 4, name)
	clk.add(time.Second)
	p.Step(name, 1, 10, "")
	clk.add(4 * time.Second)
	p.Step(name, 5, 10, "client-mean test acc 60.0%")
	// 1.5 stages in 15 s: 10 s a stage, 2.5 left.
	if s := out.String(); !strings.Contains(s, "round 5/10 client-mean test acc 60.0%  5.0s, ETA 5.0s, sweep ETA ~25.0s") {
		t.Errorf("no sweep ETA beside the stage's:\n%q", s)
	}
	p.width = func() int { return 50 }
	out = syncBuffer{}
	clk.add(time.Second)
	p.Step(name, 6, 10, "")
	if s := out.String(); strings.Contains(s, "sweep") || !strings.Contains(s, "ETA") {
		t.Errorf("on a narrow terminal the stage's ETA stays and the sweep's goes:\n%q", s)
	}
	p.StageEnd(name, time.Second, nil)
}
