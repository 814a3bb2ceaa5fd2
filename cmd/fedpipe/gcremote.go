package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/verify/kept"
)

// gcRemote implements gc --remote: it keeps the stages of graphs (and, in a kept-results
// directory, the results its index names) and removes the rest as remote.GC does.
func gcRemote(address string, graphs []*pipeline.Graph, opt remote.GCOptions, stdout, stderr io.Writer) error {
	ctx := context.Background()
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	rem, err := remote.Open(ctx, address, remote.Options{Logf: logf})
	if err != nil {
		return failf(remoteExit(err), "fedpipe gc: %v", err)
	}
	opt.Keep = map[artifacts.Digest]bool{}
	for _, g := range graphs {
		for _, n := range g.Nodes {
			opt.Keep[artifacts.Digest(n.Key)] = true
		}
	}
	if remote.IsDirAddress(address) {
		dir, err := remote.ParseDir(address)
		if err != nil {
			return failf(exitInvalid, "fedpipe gc: %v", err)
		}
		indexed, err := kept.Keys(dir)
		if err != nil {
			return failf(exitFailure, "fedpipe gc: remote %s: its kept-results index: %v", rem, err)
		}
		for k := range indexed {
			opt.Keep[k] = true
		}
	}
	rep, err := rem.GC(ctx, opt)
	if err != nil {
		return failf(exitFailure, "fedpipe gc: %v", err)
	}
	if opt.DryRun {
		var list bytes.Buffer
		tw := tabwriter.NewWriter(&list, 0, 0, 2, ' ', 0)
		for _, it := range rep.Removed {
			fmt.Fprintf(tw, "would remove\t%s\t%s\t%s\t%s\n", it.Kind, it.Key.Short(), fmtBytes(it.Size), it.Name)
		}
		tw.Flush()
		for _, line := range strings.Split(strings.TrimSuffix(list.String(), "\n"), "\n") {
			if line != "" {
				fmt.Fprintln(stdout, strings.TrimRight(line, " "))
			}
		}
		fmt.Fprintf(stdout, "would remove %d results, %d checkpoints, %d blobs, %d leases (%s in total) from %s, leaving %s in %d blobs (now %s)",
			rep.Results, rep.Checkpoints, rep.Blobs, rep.Leases, fmtBytes(rep.Bytes), rem, fmtBytes(rep.KeptBytes), rep.KeptBlobs, fmtBytes(rep.BlobBytesBefore))
	} else {
		fmt.Fprintf(stdout, "removed %d results, %d checkpoints, %d blobs, %d leases (%s) from %s; it now holds %s in %d blobs (was %s)",
			rep.Results, rep.Checkpoints, rep.Blobs, rep.Leases, fmtBytes(rep.Bytes), rem, fmtBytes(rep.KeptBytes), rep.KeptBlobs, fmtBytes(rep.BlobBytesBefore))
	}
	if rep.LiveStages > 0 {
		fmt.Fprintf(stdout, "; left alone %d stages live workers hold", rep.LiveStages)
	}
	if rep.Young > 0 {
		fmt.Fprintf(stdout, "; spared %d objects written less than --grace %v ago", rep.Young, opt.Grace)
	}
	fmt.Fprintln(stdout)
	return nil
}

// fmtBytes formats a size for a listing: bytes, KiB or MiB.
func fmtBytes(b int64) string {
	switch {
	case b >= 1<<20:
		return mib(b)
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
