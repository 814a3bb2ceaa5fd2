package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
)

// remoteFlags are the flags of the commands that can use a remote.
type remoteFlags struct {
	address  string
	worker   bool
	shard    string
	leaseTTL time.Duration
}

// register declares --remote.
func (r *remoteFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&r.address, "remote", "", "shared store: s3://BUCKET/PREFIX (endpoint, region and credentials from the AWS environment variables and files), or a directory on a shared filesystem, file:///DIR or a plain path (default $"+remote.EnvRemote+")")
}

// registerWorker declares the flags that split a run between workers on the remote.
func (r *remoteFlags) registerWorker(fs *pflag.FlagSet) {
	fs.BoolVar(&r.worker, "worker", false, "split the sweep with other workers on the same --remote: claim stages with leases, fetch the others' results, take over a dead worker's stage")
	fs.StringVar(&r.shard, "shard", "", "static split I/N: run the train stages t (in plan order) with t mod N = I and their evaluations; fetch or skip the rest")
	fs.DurationVar(&r.leaseTTL, "lease-ttl", remote.DefaultLeaseTTL, "--worker: a lease expires this long after its holder's last heartbeat")
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
// (models, personal states, masks, auxiliary tensors; results.TensorOutput). verify and ls read
// the evaluations' summaries, and report the summaries, metrics, cost, selection and
// mask tables, all of which export reads too.
func resultOutput(name string) bool { return !results.TensorOutput(name) }

// remoteExit maps an error opening a remote to an exit code.
func remoteExit(err error) int {
	if errors.Is(err, remote.ErrInvalid) {
		return exitInvalid
	}
	return exitFailure
}
