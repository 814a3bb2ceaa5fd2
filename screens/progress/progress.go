// Package progress is the terminal display of a run's stages (fedpipe run): a live bar fitted
// to the terminal's width, or plain lines when the output is not a terminal, with each
// stage's steps, time spent and ETA, and the sweep's ETA.
package progress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/pipeline"
)

// Redraw and print intervals of the two displays.
const (
	// barTick is how often the live bar is redrawn while a stage runs, so that its clock and
	// ETA move even when a round takes minutes.
	barTick = 500 * time.Millisecond
	// barThrottle is the shortest interval between two redraws caused by progress steps.
	barThrottle = 100 * time.Millisecond
	// lineEvery is the shortest interval between two progress lines inside a stage when the
	// output is not a terminal (CI logs, SLURM, nohup): one line per 30 s at most.
	lineEvery = 30 * time.Second
)

// New chooses a display: a live bar fitted to the terminal's width when w is a
// terminal and neither quiet nor CI=true; otherwise plain lines — one when a stage starts
// and ends and, inside a long stage, a progress line every 30 s at most; nothing when quiet.
func New(w io.Writer, quiet bool) pipeline.Progress {
	if quiet {
		return pipeline.Quiet{}
	}
	if f, ok := w.(*os.File); ok && IsTerminal(f) && os.Getenv("CI") != "true" {
		return &liveProgress{w: w, bar: true, every: barTick, width: func() int { return termWidth(f) }}
	}
	return &liveProgress{w: w, every: lineEvery}
}

// IsTerminal reports whether f is a terminal (a character device).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// termWidth is the terminal's width in columns: the window size of f, else $COLUMNS, else 80.
func termWidth(f *os.File) int {
	if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return int(ws.Col)
	}
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		return c
	}
	return 80
}

// liveProgress shows the running stage with its steps done of total (rounds for a train
// stage), the time spent and an ETA, and once a stage has finished, an estimate of the time
// left for all the stages this invocation runs (the sweep's ETA, sweepETA). As a bar (bar true), it redraws one line in place,
// never wider than the terminal, every `every` and at each step (at most every
// barThrottle); as lines, it prints a line when a stage starts and ends and a progress line
// every `every` at most while it runs.
type liveProgress struct {
	w     io.Writer
	bar   bool
	every time.Duration
	// width returns the terminal's columns (bar only).
	width func() int
	// now is the clock (tests replace it).
	now func() time.Time

	mu           sync.Mutex
	index, total int
	name         string
	start        time.Time
	done, steps  int
	note         string
	// base and baseAt are the first step seen in this stage and when (a resumed train
	// stage starts past round 0): the ETA is the rate since then.
	base   int
	baseAt time.Time
	// lastDraw is the last redraw (bar) or progress line (lines).
	lastDraw time.Time
	// sweepStart is when the invocation's first stage started.
	sweepStart time.Time
	// drawn is the width of the line on screen (bar).
	drawn int
	stop  chan struct{}
	// running holds every stage started and not ended, by name (several when runs train
	// together, pipeline.Executor.Together): the display follows one of them (name), and
	// the others' steps are not shown; each one's end is its own line.
	running map[string]runningStage
}

// runningStage is a stage liveProgress saw start.
type runningStage struct {
	index int
	start time.Time
}

func (p *liveProgress) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// StageStart shows the stage and starts the ticker that keeps the display moving.
func (p *liveProgress) StageStart(index, total int, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.index, p.total, p.name, p.start = index, total, name, p.clock()
	if p.running == nil {
		p.running = map[string]runningStage{}
	}
	p.running[name] = runningStage{index: index, start: p.start}
	if p.stop != nil { // another stage was shown: its ticker stops, this one's starts
		close(p.stop)
		p.stop = nil
	}
	if index <= 1 || p.sweepStart.IsZero() {
		p.sweepStart = p.start
	}
	p.done, p.steps, p.note, p.base, p.baseAt = 0, 0, "", -1, time.Time{}
	p.lastDraw = p.start
	if p.bar {
		p.draw()
	} else {
		fmt.Fprintf(p.w, "[%d/%d] %s ...\n", index, total, name)
	}
	p.stop = make(chan struct{})
	go p.tick(p.stop)
}

func (p *liveProgress) tick(stop chan struct{}) {
	t := time.NewTicker(min(p.every, barTick))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.stop == stop {
				p.refresh(false)
			}
			p.mu.Unlock()
		}
	}
}

// Step records progress within the stage.
func (p *liveProgress) Step(name string, done, total int, note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if name != p.name && name != "" {
		return // a stage running beside the one shown
	}
	if p.base < 0 {
		// The first step: a stage at step 1 started from 0 when the stage started; one
		// further on (resumed) is timed from now.
		p.base, p.baseAt = done, p.clock()
		if done == 1 {
			p.base, p.baseAt = 0, p.start
		}
	}
	p.done, p.steps = done, total
	if note != "" {
		p.note = note
	}
	p.refresh(done == total)
}

// refresh redraws the bar, or prints a progress line, when it is time to.
func (p *liveProgress) refresh(force bool) {
	now := p.clock()
	if p.bar {
		if force || now.Sub(p.lastDraw) >= barThrottle {
			p.draw()
		}
		return
	}
	// Lines: the stage's end is its own line; no progress line just before it.
	if !force && now.Sub(p.lastDraw) >= p.every {
		p.lastDraw = now
		fmt.Fprintln(p.w, p.status(0))
	}
}

// eta estimates the time left from the rate of steps since the first one; 0 when unknown.
func (p *liveProgress) eta(now time.Time) time.Duration {
	if p.base < 0 || p.done <= p.base || p.steps <= 0 || p.done >= p.steps {
		return 0
	}
	per := now.Sub(p.baseAt) / time.Duration(p.done-p.base)
	return per * time.Duration(p.steps-p.done)
}

// sweepETA estimates the time left for every stage of the invocation: the time spent since
// its first stage per stage done (the running one counted by its fraction of steps done),
// times the stages left. Stages of one kind take about as long as each other, so it firms
// up as stages finish; 0 until one has (or when this is the only one).
func (p *liveProgress) sweepETA(now time.Time) time.Duration {
	finished := float64(p.index - 1)
	if finished < 1 || p.total <= 1 {
		return 0
	}
	if p.steps > 0 {
		finished += float64(min(p.done, p.steps)) / float64(p.steps)
	}
	left := float64(p.total) - finished
	if left <= 0 {
		return 0
	}
	return time.Duration(float64(now.Sub(p.sweepStart)) / finished * left)
}

// status is the stage's progress as one line of at most width runes (0: any width). It
// drops, in order, the bar, the note, the sweep's ETA, the time spent and the middle of the
// stage name to fit; the rounds done of total and the stage's ETA stay.
func (p *liveProgress) status(width int) string {
	now := p.clock()
	head := fmt.Sprintf("[%d/%d] ", p.index, p.total)
	count, elapsed, eta, note := "", "  "+live.FormatDuration(now.Sub(p.start)), "", ""
	if p.steps > 0 {
		count = fmt.Sprintf(" %d/%d", p.done, p.steps)
		if strings.HasPrefix(p.name, "train") {
			count = fmt.Sprintf(" round %d/%d", p.done, p.steps)
		}
	}
	if e := p.eta(now); e > 0 {
		eta = ", ETA " + live.FormatDuration(e)
	}
	if p.note != "" {
		note = " " + p.note
	}
	sweep := ""
	if e := p.sweepETA(now); e > 0 {
		sweep = ", sweep ETA ~" + live.FormatDuration(e)
	}
	bar := ""
	if p.bar && p.steps > 0 {
		const barLen = 20
		filled := min(barLen, p.done*barLen/p.steps)
		bar = " [" + strings.Repeat("#", filled) + strings.Repeat(".", barLen-filled) + "]"
	}
	rest := func() string { return bar + count + note + elapsed + eta + sweep }
	if width <= 0 || runeLen(head+p.name+rest()) <= width {
		return head + p.name + rest()
	}
	for _, drop := range []*string{&bar, &note, &sweep} {
		*drop = ""
		if runeLen(head+p.name+rest()) <= width {
			return head + p.name + rest()
		}
	}
	if eta != "" {
		elapsed, eta = "", "  ETA "+strings.TrimPrefix(eta, ", ETA ")
	}
	return fitName(head, p.name, rest(), width)
}

// fitName joins head, name and tail in at most width runes, shortening name in the middle
// (keeping its kind and method at the start and its seed at the end), else cutting the end.
func fitName(head, name, tail string, width int) string {
	line := head + name + tail
	over := runeLen(line) - width
	if width <= 0 || over <= 0 {
		return line
	}
	if r := []rune(name); len(r)-over-1 >= 8 {
		keep := len(r) - over - 1
		return head + string(r[:keep-keep/2]) + "…" + string(r[len(r)-keep/2:]) + tail
	}
	s := []rune(line)
	return string(s[:max(0, width-1)]) + "…"
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// draw rewrites the bar's line in place, one column short of the terminal's width so that
// it never wraps.
func (p *liveProgress) draw() {
	p.lastDraw = p.clock()
	line := p.status(p.width() - 1)
	n := runeLen(line)
	pad := ""
	if n < p.drawn {
		pad = strings.Repeat(" ", p.drawn-n)
	}
	p.drawn = n
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
}

// StageEnd stops the ticker and says how the stage ended: done, interrupted (Ctrl-C,
// SIGTERM) or failed.
func (p *liveProgress) StageEnd(name string, d time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	index := p.index
	if r, ok := p.running[name]; ok {
		index = r.index
		delete(p.running, name)
	}
	shown := name == p.name
	if shown && p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
	status := "done in " + live.FormatDuration(d)
	switch {
	case errors.Is(err, context.Canceled):
		status = "interrupted after " + live.FormatDuration(d)
	case err != nil:
		status = "failed after " + live.FormatDuration(d)
	}
	head := fmt.Sprintf("[%d/%d] ", index, p.total)
	if !p.bar {
		fmt.Fprintln(p.w, head+name+" "+status)
	} else {
		line := fitName(head, name, " "+status, p.width()-1)
		pad := ""
		if n := runeLen(line); n < p.drawn {
			pad = strings.Repeat(" ", p.drawn-n)
		}
		p.drawn = 0
		fmt.Fprintf(p.w, "\r%s%s\n", line, pad)
	}
	if shown {
		p.follow()
	}
}

// follow shows the latest-started of the stages still running, once the one shown ended.
// Called with p.mu held.
func (p *liveProgress) follow() {
	next, at := "", runningStage{}
	for n, r := range p.running {
		if next == "" || r.index > at.index {
			next, at = n, r
		}
	}
	if next == "" {
		return
	}
	p.name, p.index, p.start = next, at.index, at.start
	p.done, p.steps, p.note, p.base, p.baseAt = 0, 0, "", -1, time.Time{}
	p.stop = make(chan struct{})
	go p.tick(p.stop)
	if p.bar {
		p.draw()
	}
}

// Logf prints a message on its own line (clearing the bar first).
func (p *liveProgress) Logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar && p.drawn > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.drawn))
		p.drawn = 0
	}
	fmt.Fprintf(p.w, format+"\n", args...)
	if p.bar && p.stop != nil {
		p.draw()
	}
}
