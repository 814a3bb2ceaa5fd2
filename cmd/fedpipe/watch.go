package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/screens/progress"
	"github.com/fedpipe/fedpipe/screens/watch"
	"github.com/fedpipe/fedpipe/stages/data"
)

// wantsWatch reports whether status was asked to --watch (status --watch is its own
// command: it reads progress journals, not the plan).
func wantsWatch(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--watch" {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--watch="); ok {
			on, err := strconv.ParseBool(v)
			return on || err != nil // an invalid value: statusWatch's parser says so
		}
	}
	return false
}

// watchFlags are status's flags, with or without --watch.
type watchFlags struct {
	commonFlags
	watch    bool
	interval time.Duration
	once     bool
}

// declare declares the groups g and --watch and its flags (status without --watch declares
// them too, so that its help lists them; statusWatch is what honours them).
func (f *watchFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.commonFlags.declare(fs, g)
	fs.BoolVar(&f.watch, "watch", false, "follow the runs as they train: state (waiting, training round r of T with ETA, finished, failed, stalled) and latest figures, refreshed")
	fs.DurationVar(&f.interval, "interval", 2*time.Second, "with --watch: time between refreshes")
	fs.BoolVar(&f.once, "once", false, "with --watch: print the states once and exit")
}

// watchOnly is status's error for a --watch flag given without --watch (nil if none).
func watchOnly(fs *pflag.FlagSet) error {
	for _, name := range []string{"interval", "once"} {
		if fs.Changed(name) {
			return fmt.Errorf("--%s goes with --watch", name)
		}
	}
	return nil
}

// startWatch checks a watching command's arguments (one MANIFEST or more, args) and its
// refresh period (*every, flag name, at least least) and opens the watch, with a context
// that Ctrl-C and SIGTERM cancel (stop releases it). err ends the command at once: invalid
// input (2) or a failure.
func startWatch(name string, args []string, f *commonFlags, flag string, every *time.Duration, least time.Duration, stderr io.Writer) (ctx context.Context, w *watch.Watch, stop func(), err error) {
	if len(args) == 0 {
		return nil, nil, nil, usageErr("fedpipe %s: expected at least one MANIFEST argument", name)
	}
	if *every < least {
		return nil, nil, nil, failf(exitInvalid, "fedpipe %s: --%s %v: must be at least %v", name, flag, *every, least)
	}
	ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	w, err = openWatch(ctx, args, f, stderr)
	if err != nil {
		stop()
		return nil, nil, nil, failure("fedpipe "+strings.Fields(name)[0], err)
	}
	return ctx, w, stop, nil
}

// openWatch loads the manifests named on the command line and what the store and remote
// already hold: what status --watch and serve start from.
func openWatch(ctx context.Context, paths []string, f *commonFlags, stderr io.Writer) (*watch.Watch, error) {
	loader := &data.Loader{DataDir: f.data}
	var graphs []*pipeline.Graph
	for _, p := range paths {
		g, _, err := loadGraphSet(p, f.set, loader, f.backend)
		if err == nil && len(f.only) > 0 {
			g, err = pipeline.Only(g, f.only)
		}
		if err != nil {
			return nil, err
		}
		graphs = append(graphs, g)
	}
	logf := func(string, ...any) {}
	rem, err := f.remote.open(ctx, logf)
	if err != nil {
		return nil, err
	}
	// The store a run of the first manifest writes to (artifacts/storedir), which may not exist
	// yet: the watch waits for it.
	return watch.Open(ctx, f.writeDir(paths[0]), rem, graphs, logf)
}

// cmdStatusWatch is `fedpipe status MANIFEST... --watch`: every run's state and latest
// figures, refreshed every --interval until every run has finished or failed, or Ctrl-C.
var cmdStatusWatch = &command{
	name:      "status",
	usageLine: "fedpipe status MANIFEST... --watch [flags]",
	long: "Follows every run of the manifests while a run or workers train them (in this store, or on --remote):\n" +
		"waiting, training round r of T with its ETA, finished, failed, interrupted, or stalled (its process is\n" +
		"gone, or its worker's lease is no longer renewed), with the latest training loss and test accuracy.\n" +
		"It reads the progress journals train stages publish and never waits for or slows a run. It ends when\n" +
		"every run has finished or failed, or on Ctrl-C.",
	groups: statusGroups,
	flags:  withFlags(statusWatch),
}

// statusWatch is `fedpipe status MANIFEST... --watch`.
func statusWatch(c *call, f *watchFlags, args []string) error {
	stdout := c.stdout
	ctx, w, stop, err := startWatch("status --watch", args, &f.commonFlags, "interval", &f.interval, 100*time.Millisecond, c.stderr)
	if err != nil {
		return err
	}
	defer stop()
	clear := false
	if file, ok := stdout.(*os.File); ok && progress.IsTerminal(file) && !f.json {
		clear = true
	}
	if err := w.Follow(ctx, stdout, watch.FollowOptions{JSON: f.json, Clear: clear, Interval: f.interval, Once: f.once}); err != nil {
		return failure("fedpipe status", err)
	}
	return nil
}
