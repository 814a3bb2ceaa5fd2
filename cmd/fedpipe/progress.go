package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fedpipe/fedpipe/pipeline"
)

// newProgress chooses a display: a live bar when w is a terminal and neither quiet nor
// CI=true; one line per stage when w is a pipe or file; nothing when quiet.
func newProgress(w io.Writer, quiet bool) pipeline.Progress {
	if quiet {
		return pipeline.Quiet{}
	}
	if f, ok := w.(*os.File); ok && isTerminal(f) && os.Getenv("CI") != "true" {
		return &barProgress{w: w}
	}
	return &lineProgress{w: w}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// lineProgress prints a line when a stage starts and ends; no carriage returns.
type lineProgress struct {
	w     io.Writer
	mu    sync.Mutex
	index int
	total int
}

func (p *lineProgress) StageStart(index, total int, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.index, p.total = index, total
	fmt.Fprintf(p.w, "[%d/%d] %s ...\n", index, total, name)
}

func (p *lineProgress) Step(string, int, int, string) {}

func (p *lineProgress) StageEnd(name string, d time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		fmt.Fprintf(p.w, "[%d/%d] %s failed after %s\n", p.index, p.total, name, fmtDur(d))
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s done in %s\n", p.index, p.total, name, fmtDur(d))
}

func (p *lineProgress) Logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// barProgress redraws one status line with a bar for the running stage.
type barProgress struct {
	w     io.Writer
	mu    sync.Mutex
	index int
	total int
	name  string
	start time.Time
	last  time.Time
	width int
}

func (p *barProgress) StageStart(index, total int, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.index, p.total, p.name, p.start = index, total, name, time.Now()
	p.draw(0, 0, "")
}

func (p *barProgress) Step(name string, done, total int, note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 100*time.Millisecond && done < total {
		return
	}
	p.draw(done, total, note)
}

func (p *barProgress) draw(done, total int, note string) {
	p.last = time.Now()
	const barLen = 24
	bar := ""
	if total > 0 {
		filled := done * barLen / total
		bar = " [" + strings.Repeat("#", filled) + strings.Repeat(".", barLen-filled) + "]"
		bar += fmt.Sprintf(" %d/%d", done, total)
	}
	if note != "" {
		note = " " + note
	}
	line := fmt.Sprintf("[%d/%d] %s%s%s %s", p.index, p.total, p.name, bar, note, fmtDur(time.Since(p.start)))
	pad := ""
	if len(line) < p.width {
		pad = strings.Repeat(" ", p.width-len(line))
	}
	p.width = len(line)
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
}

func (p *barProgress) StageEnd(name string, d time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	status := "done"
	if err != nil {
		status = "failed"
	}
	line := fmt.Sprintf("[%d/%d] %s %s in %s", p.index, p.total, name, status, fmtDur(d))
	pad := ""
	if len(line) < p.width {
		pad = strings.Repeat(" ", p.width-len(line))
	}
	p.width = 0
	fmt.Fprintf(p.w, "\r%s%s\n", line, pad)
}

func (p *barProgress) Logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	p.width = 0
	fmt.Fprintf(p.w, format+"\n", args...)
}

func fmtDur(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}
