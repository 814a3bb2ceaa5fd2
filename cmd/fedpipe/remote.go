package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
)

// remoteFlags are the flags of the commands that can use a remote.
type remoteFlags struct {
	address  string
	worker   bool
	shard    string
	leaseTTL time.Duration
}

func (r *remoteFlags) register(fs *pflag.FlagSet, cmd string) {
	fs.StringVar(&r.address, "remote", "", "shared store: s3://BUCKET/PREFIX (endpoint, region and credentials from the AWS environment variables and files), or a directory on a shared filesystem, file:///DIR or a plain path (default $"+remote.EnvRemote+")")
	if cmd == "run" {
		fs.BoolVar(&r.worker, "worker", false, "split the sweep with other workers on the same --remote: claim stages with leases, fetch the others' results, take over a dead worker's stage")
		fs.StringVar(&r.shard, "shard", "", "static split I/N: run the train stages t (in plan order) with t mod N = I and their evaluations; fetch or skip the rest")
		fs.DurationVar(&r.leaseTTL, "lease-ttl", remote.DefaultLeaseTTL, "--worker: a lease expires this long after its holder's last heartbeat")
	}
}

// addr is the remote named by --remote, else $FEDPIPE_REMOTE ("" for none).
func (r *remoteFlags) addr() string {
	if r.address != "" {
		return r.address
	}
	return os.Getenv(remote.EnvRemote)
}

// split returns the executor's Split for --worker / --shard (nil for neither).
func (r *remoteFlags) split() (*pipeline.Split, error) {
	if !r.worker && r.shard == "" {
		return nil, nil
	}
	if r.addr() == "" {
		return nil, fmt.Errorf("--worker and --shard need a remote: --remote s3://BUCKET/PREFIX, --remote file:///DIR or $%s", remote.EnvRemote)
	}
	if r.worker && r.shard != "" {
		return nil, errors.New("use --worker (workers share the stages dynamically) or --shard I/N (a fixed split), not both")
	}
	if r.leaseTTL < time.Second {
		return nil, fmt.Errorf("--lease-ttl %v: must be at least 1s", r.leaseTTL)
	}
	// A waiting worker backs off from Poll to MaxPoll; at most half a TTL between looks
	// keeps a dead worker's stage taken over within about two TTLs of its last heartbeat
	// (a lease is taken over once seen unchanged for a TTL; see remote.TryLease).
	poll := min(max(r.leaseTTL/6, 200*time.Millisecond), 10*time.Second)
	sp := &pipeline.Split{Worker: r.worker, Poll: poll, MaxPoll: min(max(r.leaseTTL/2, poll), 30*time.Second)}
	if r.shard != "" {
		i, n, err := pipeline.ParseShard(r.shard)
		if err != nil {
			return nil, err
		}
		sp.Shard, sp.Shards = i, n
	}
	return sp, nil
}

// open connects to the remote, or returns nil without one. An invalid address or setting
// is reported as such (exit 2 for the caller).
func (r *remoteFlags) open(ctx context.Context, logf func(string, ...any)) (*remote.Remote, error) {
	addr := r.addr()
	if addr == "" {
		return nil, nil
	}
	return remote.Open(ctx, addr, remote.Options{Logf: logf, LeaseTTL: r.leaseTTL})
}

// resultOutput reports whether push --results-only keeps a stage output: every output
// that export reads (tables, summaries, the report), none that it skips as a tensor
// (models, personal states, masks, auxiliary tensors; tensorOutput). verify and ls read
// the evaluations' summaries, and report the summaries, metrics, cost, selection and
// mask tables, all of which export reads too.
func resultOutput(name string) bool { return !tensorOutput(name) }

// remoteExit maps an error opening a remote to an exit code.
func remoteExit(err error) int {
	if errors.Is(err, remote.ErrInvalid) {
		return exitInvalid
	}
	return exitFailure
}

// pushPull implements `fedpipe push` and `fedpipe pull`.
func pushPull(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var rf remoteFlags
	rf.register(fs, cmd)
	storeFlag := fs.String("store", "", "store directory (default $FEDPIPE_STORE, else the .fedpipe found as docs/commands.md says)")
	dataFlag := fs.String("data", "", "directory holding datasets (to compute the manifests' keys)")
	backendFlag := fs.String("backend", "", "GoMLX backend the results were computed with")
	checkpoints := fs.Bool("checkpoints", false, "also copy the resume points of unfinished train stages")
	var resultsOnly *bool
	if cmd == "push" {
		resultsOnly = fs.Bool("results-only", false, "push what verify, report, ls and export read (summaries, metrics, cost, selection and other tables), not the models and states; a run that needs a model recomputes its train stage")
	}
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	lockTimeout := fs.Duration("lock-timeout", 30*time.Second, "how long to wait for another fedpipe using the same store")
	var sets []string
	registerSet(fs, &sets)
	only := fs.StringSlice("only", nil, "only the runs of these method labels (comma-separated) and the stages they need")
	fs.Usage = func() {
		what := "Uploads the cached results of MANIFEST's stages that the remote lacks (blobs first, then\nthe result entries)."
		if cmd == "pull" {
			what = "Downloads the results of MANIFEST's stages that the remote holds and the local store lacks\n(every blob verified against its digest)."
		}
		fmt.Fprintf(fs.Output(), "Usage: fedpipe %s MANIFEST... --remote s3://BUCKET/PREFIX|file:///DIR [flags]\n\n%s\n\nFlags:\n%s", cmd, what, fs.FlagUsages())
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "fedpipe %s: name at least one MANIFEST\n", cmd)
		fs.Usage()
		return exitInvalid
	}
	if rf.addr() == "" {
		fmt.Fprintf(stderr, "fedpipe %s: no remote: give --remote s3://BUCKET/PREFIX, --remote file:///DIR or set $%s\n", cmd, remote.EnvRemote)
		return exitInvalid
	}
	var graphs []*pipeline.Graph
	loader := &data.Loader{DataDir: *dataFlag}
	for _, path := range fs.Args() {
		g, _, err := loadGraphSet(path, sets, loader, *backendFlag)
		if err == nil && len(*only) > 0 {
			g, err = pipeline.Only(g, *only)
		}
		if err != nil {
			fmt.Fprintf(stderr, "fedpipe %s: %v\n", cmd, err)
			return exitInvalid
		}
		graphs = append(graphs, g)
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	ctx := context.Background()
	rem, err := rf.open(ctx, logf)
	if err != nil {
		fmt.Fprintf(stderr, "fedpipe %s: %v\n", cmd, err)
		return remoteExit(err)
	}
	dir := runStore(*storeFlag, fs.Arg(0))
	if cmd == "push" { // push only reads: it never creates a store
		if dir, err = findStore(*storeFlag, fs.Arg(0), stderr); err != nil {
			fmt.Fprintf(stderr, "fedpipe %s: %v\n", cmd, err)
			return exitInvalid
		}
	}
	open := artifacts.Open
	if cmd == "push" {
		// push only reads the local store: a store a run holds (a paper-scale cell
		// computing beside the one just finished) is read from a snapshot, not waited for.
		open = artifacts.OpenReader
	}
	store, err := open(dir, artifacts.Options{LockTimeout: *lockTimeout, Logf: logf})
	if err != nil {
		fmt.Fprintf(stderr, "fedpipe %s: %v\n", cmd, err)
		return exitFailure
	}
	defer store.Close()
	start := time.Now()
	var rep pipeline.SyncReport
	if cmd == "pull" {
		rep, err = pipeline.Pull(ctx, graphs, store, rem, *checkpoints)
	} else {
		opt := pipeline.SyncOptions{Checkpoints: *checkpoints}
		if *resultsOnly {
			if *checkpoints {
				fmt.Fprintf(stderr, "fedpipe push: --results-only leaves models out; --checkpoints would push them\n")
				return exitInvalid
			}
			opt.Keep = resultOutput
		}
		rep, err = pipeline.Push(ctx, graphs, store, rem, opt)
		if err == nil {
			err = recordKept(rf.addr(), graphs, store)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "fedpipe %s: %v\n", cmd, err)
		return exitFailure
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"remote": rem.String(), "store": dir, "results": rep.Results,
			"present": rep.Present, "missing": rep.Missing, "partial": rep.Partial, "checkpoints": rep.Checkpoints, "blobs": rep.Blobs,
			"bytes": rep.Bytes, "seconds": time.Since(start).Seconds()})
	}
	verb, where, absent := "pushed", "the remote", "not in the local store"
	if cmd == "pull" {
		verb, where, absent = "pulled", "the local store", "not in the remote (or corrupt there)"
	}
	fmt.Fprintf(stdout, "%s %d results (%d blobs, %s)", verb, rep.Results, rep.Blobs, mib(rep.Bytes))
	if rep.Partial > 0 {
		fmt.Fprintf(stdout, "; %d results only (no models)", rep.Partial)
	}
	if *checkpoints {
		fmt.Fprintf(stdout, " and %d checkpoints", rep.Checkpoints)
	}
	fmt.Fprintf(stdout, "; %d already in %s, %d %s (%s, remote %s, store %s)\n", rep.Present, where, rep.Missing, absent,
		fmtSeconds(time.Since(start)), rem, dir)
	return exitOK
}

// recordKept writes, for a push into a directory remote, the index of the stages the
// store holds (pipeline.RecordKept), so that a later reader can tell a kept result that
// is stale from one never computed. An S3 remote keeps no index.
func recordKept(address string, graphs []*pipeline.Graph, store *artifacts.Store) error {
	if !remote.IsDirAddress(address) {
		return nil
	}
	dir, err := remote.ParseDir(address)
	if err != nil {
		return err
	}
	for _, g := range graphs {
		for _, n := range g.Nodes {
			if _, ok, err := store.ActionMeta(artifacts.Digest(n.Key)); err != nil {
				return err
			} else if !ok {
				continue
			}
			if err := pipeline.RecordKept(dir, g, n); err != nil {
				return err
			}
		}
	}
	return nil
}
