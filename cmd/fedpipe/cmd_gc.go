package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/artifacts/storedir"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
)

// cmdGC removes what no given manifest, and no recent run, references: from the local store,
// or with --remote from a remote (gcRemote, gcremote.go).
var cmdGC = &command{
	name:     "gc",
	overview: []string{"gc [MANIFEST...]          delete results no given manifest (or recent run) uses; --remote URL: in a remote"},
	usageLine: `fedpipe gc [MANIFEST...] [--keep-recent DURATION] [--store DIR] [--dry-run]
       fedpipe gc --remote URL [MANIFEST...] [--keep-recent DURATION] [--grace DURATION] [--dry-run]`,
	long: `Deletes every cached result that none of the MANIFESTs' stages uses and that is older than
--keep-recent, then the blobs and chunks nothing references any more, rewrites the store's
value log so that the space goes back to the disk (also what earlier runs of gc removed), and
reports the sizes. Resume checkpoints are kept. At least one MANIFEST or --keep-recent is
required. --dry-run counts what would go, with sizes, and removes nothing.

With --remote, tidies the remote instead (the local store is not opened): drops the result
entries no MANIFEST's stage uses (and older than --keep-recent), the checkpoints of those
stages, the blobs nothing kept references and expired leases of dropped stages. It never
removes anything of a stage a live worker holds (its lease was renewed lately), nor any
object written less than --grace ago. A directory remote that is a kept-results directory
(e.g. reproduced/) also keeps every result its cells/ index names. --dry-run lists what
would go, with sizes and a total.`,
	groups: storeGroup,
	flags:  withFlags(gcCmd),
}

// gcFlags are gc's flags.
type gcFlags struct {
	commonFlags
	dataDir, backend, remote string
	recent, grace            time.Duration
	dryRun                   bool
}

func (f *gcFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.commonFlags.declare(fs, g)
	fs.StringVar(&f.dataDir, "data", "", "directory holding datasets (to compute the manifests' keys)")
	fs.StringVar(&f.backend, "backend", "", "GoMLX backend the kept results were computed with")
	fs.DurationVar(&f.recent, "keep-recent", 0, "also keep every result recorded less than this long ago (e.g. 168h)")
	fs.StringVar(&f.remote, "remote", "", "tidy this remote instead of the local store: s3://BUCKET/PREFIX or a directory remote, file:///DIR or a plain path ($"+remote.EnvRemote+" is not read: name it)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "list what would be removed, with sizes, and remove nothing")
	fs.DurationVar(&f.grace, "grace", remote.DefaultGCGrace, "--remote: never remove an object written less than this long ago (a concurrent writer uploads a result's blobs before its entry); 0 only when nothing writes to the remote")
}

// gcCmd is `fedpipe gc [MANIFEST...]`.
func gcCmd(c *call, f *gcFlags, args []string) error {
	stdout, stderr := c.stdout, c.stderr
	sf := &f.storeFlags
	if len(args) == 0 && f.recent <= 0 {
		return failf(exitInvalid, "fedpipe gc: name the manifests whose results to keep, or --keep-recent (refusing to delete everything)")
	}
	if f.remote == "" && c.fs.Changed("grace") {
		return failf(exitInvalid, "fedpipe gc: --grace applies to --remote only (the local gc takes the store's lock: nothing writes to it meanwhile)")
	}
	if f.remote != "" && c.fs.Changed("store") {
		return failf(exitInvalid, "fedpipe gc: --store and --remote exclude each other: gc tidies one of them (run it twice for both)")
	}
	var graphs []*pipeline.Graph
	loader := &data.Loader{DataDir: f.dataDir}
	for _, path := range args {
		g, _, err := loadGraph(path, loader, f.backend)
		if err != nil {
			return failf(exitInvalid, "fedpipe gc: %v", err)
		}
		graphs = append(graphs, g)
	}
	if f.remote != "" {
		return gcRemote(f.remote, graphs, remote.GCOptions{KeepRecent: f.recent, Grace: f.grace, DryRun: f.dryRun}, stdout, stderr)
	}
	open := artifacts.Open
	if f.dryRun {
		open = artifacts.OpenReader // it only reads: a store a run holds is read from a snapshot
	}
	dir := sf.writeDir(c.fs.Arg(0)) // the store run and ls find (artifacts/storedir)
	if !storedir.Has(dir) {
		fmt.Fprintf(stdout, "no store at %s: nothing to remove\n", dir)
		return nil
	}
	s, err := open(dir, sf.options(storeNotices("fedpipe gc", stderr)))
	if err != nil {
		return failf(exitCodeOf(err), "fedpipe gc: %v", err)
	}
	defer s.Close()
	before, _ := s.Stats()
	keep, err := pipeline.KeepSet(s, graphs, f.recent)
	if err == nil {
		var live map[artifacts.Digest]bool
		if live, err = pipeline.Live(s, keep); err == nil {
			var r artifacts.GCReport
			if f.dryRun {
				if r, err = s.GCDryRun(keep, live); err == nil {
					fmt.Fprintf(stdout, "would remove %d results, %d blobs, %d chunks (%s) from %s (now %s in %d blobs); removed nothing\n",
						r.Actions, r.Blobs, r.Chunks, mib(r.Bytes), s.Dir(), mib(before.StoredBytes), before.Blobs)
					return nil
				}
			} else if r, err = s.GC(keep, live); err == nil {
				after, _ := s.Stats()
				fmt.Fprintf(stdout, "removed %d results, %d blobs, %d chunks (%s); store now %s in %d blobs (was %s); its files take %s on disk (were %s)\n",
					r.Actions, r.Blobs, r.Chunks, mib(r.Bytes), mib(after.StoredBytes), after.Blobs, mib(before.StoredBytes), mib(r.DiskAfter), mib(r.DiskBefore))
				if r.Unreclaimed != "" {
					fmt.Fprintf(stdout, "the disk space was not given back: %s\n", r.Unreclaimed)
				}
				return nil
			}
		}
	}
	return failf(exitCodeOf(err), "fedpipe gc: %v", err)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
