package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/launch"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// registerLaunch declares the flags k8s and slurm share.
func registerLaunch(fs *pflag.FlagSet, f *launch.Config) {
	fs.StringVar(&f.Remote, "remote", "", "the shared store s3://BUCKET/PREFIX, or (slurm) file:///DIR on a filesystem every node mounts (default $"+remote.EnvRemote+")")
	fs.IntVar(&f.Workers, "workers", 0, "how many workers run at once (required)")
	fs.BoolVar(&f.Static, "static", false, "split statically: worker i runs --shard i/N instead of --worker")
	fs.DurationVar(&f.LeaseTTL, "lease-ttl", remote.DefaultLeaseTTL, "workers' lease TTL (a dead worker's stage is taken over after it)")
	fs.StringVar(&f.CPU, "cpu", "2", "CPUs per worker")
	fs.StringVar(&f.Memory, "memory", "", "memory per worker (default: what the manifest's largest cell needs, from fedpipe's estimate; see the job's comment)")
	fs.StringVar(&f.DataDir, "data", "", "dataset directory as the workers see it (passed as --data)")
	fs.StringVar(&f.Name, "name", "", "job name (default fedpipe-<manifest name>)")
}

// cmdK8s is `fedpipe k8s MANIFEST`: a Kubernetes ConfigMap and Indexed Job of workers.
var cmdK8s = &command{
	name:      "k8s",
	overview:  []string{"k8s MANIFEST --image IMG --remote URL --workers N   a Kubernetes Indexed Job of workers"},
	usageLine: "fedpipe k8s MANIFEST --image IMG --remote s3://BUCKET/PREFIX --workers N [flags]",
	long:      "Prints a Kubernetes ConfigMap (the manifest) and an Indexed Job of --workers pods, each running\n`fedpipe run MANIFEST --remote URL --worker`. Apply with: fedpipe k8s … | kubectl apply -f -",
	flags:     withFlags(k8sCmd),
}

// k8sFlags are k8s's flags.
type k8sFlags struct{ launch.Config }

func (o *k8sFlags) declare(fs *pflag.FlagSet, _ flagGroup) {
	f := &o.Config
	registerLaunch(fs, f)
	fs.StringVar(&f.Image, "image", "", "container image holding fedpipe (required; see the Dockerfile)")
	fs.StringVar(&f.Secret, "secret", "fedpipe-s3", "Secret whose keys (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, optionally AWS_ENDPOINT_URL, AWS_REGION) become the workers' environment")
	fs.StringVar(&f.Endpoint, "endpoint", "", "S3 endpoint for the workers (AWS_ENDPOINT_URL; default: from the Secret, else Amazon S3)")
	fs.StringVar(&f.Region, "region", "", "S3 region for the workers (AWS_REGION; default: from the Secret)")
	fs.IntVar(&f.Retries, "retries", 3, "backoffLimitPerIndex: how often a failed worker is restarted (it resumes)")
	fs.StringVar(&f.Namespace, "namespace", "", "namespace of the Job and its ConfigMap (default: kubectl's)")
}

// k8sCmd is `fedpipe k8s MANIFEST`.
func k8sCmd(c *call, o *k8sFlags, args []string) error {
	f := o.Config
	check := func(cfg remote.Config) error {
		switch {
		case cfg.Workers().SharedPath:
			return fmt.Errorf("a directory remote (%s) is not shared by pods: give --remote s3://BUCKET/PREFIX", cfg)
		case f.Workers < 1:
			return fmt.Errorf("--workers must be at least 1")
		case f.Image == "":
			return fmt.Errorf("--image is required (build one with the Dockerfile in the repository)")
		}
		return f.CheckQuantities()
	}
	path, name, m, err := startLaunch(c, args, &f, check)
	if err != nil {
		return err
	}
	text, err := os.ReadFile(path)
	if err == nil {
		err = defaultMemory(&f, m)
	}
	if err != nil {
		return failf(exitInvalid, "fedpipe k8s: %v", err)
	}
	out, err := launch.K8s(f, name, filepath.Base(path), string(text))
	if err != nil {
		return failf(exitFailure, "fedpipe k8s: %v", err)
	}
	fmt.Fprint(c.stdout, out)
	return nil
}

// cmdSlurm is `fedpipe slurm MANIFEST`: an sbatch script for a job array of workers.
var cmdSlurm = &command{
	name:      "slurm",
	overview:  []string{"slurm MANIFEST --remote URL --workers N             an sbatch --array script of workers"},
	usageLine: "fedpipe slurm MANIFEST --remote s3://BUCKET/PREFIX|file:///DIR --workers N [flags]",
	long:      "Prints an sbatch script for a job array of --workers tasks, each running\n`fedpipe run MANIFEST --remote URL --worker`. Submit with: fedpipe slurm … > sweep.sh && sbatch sweep.sh\nCredentials come from the environment sbatch passes on (or ~/.aws) and are never written into the script.",
	flags:     withFlags(slurmCmd),
}

// slurmFlags are slurm's flags.
type slurmFlags struct{ launch.Config }

func (o *slurmFlags) declare(fs *pflag.FlagSet, _ flagGroup) {
	f := &o.Config
	registerLaunch(fs, f)
	fs.StringVar(&f.Fedpipe, "fedpipe", "fedpipe", "the fedpipe binary as the compute nodes see it")
	fs.StringVar(&f.TimeLimit, "time", "24:00:00", "time limit per worker (#SBATCH --time)")
	fs.StringVar(&f.Partition, "partition", "", "SLURM partition (#SBATCH --partition)")
	fs.StringVar(&f.Account, "account", "", "account the job is charged to (#SBATCH --account)")
	fs.StringVar(&f.Gres, "gres", "", "generic resources per task, e.g. gpu:1 or gpu:a100:1 for XLA workers (#SBATCH --gres); pair with --backend")
	fs.StringArrayVar(&f.Setup, "setup", nil, "a shell line each task runs before fedpipe, e.g. 'module load cuda/12.4' or 'source ~/venv/bin/activate' (repeatable, in order)")
	fs.StringVar(&f.Output, "output", "", "path of each task's log, with sbatch's patterns (#SBATCH --output; default <job name>-%A_%a.out in the submission directory)")
	fs.StringVar(&f.Backend, "backend", "", "GoMLX backend the workers train with, e.g. xla:cuda (passed as --backend; default the workers' $GOMLX_BACKEND, else the CPU backend)")
}

// slurmCmd is `fedpipe slurm MANIFEST`.
func slurmCmd(c *call, o *slurmFlags, args []string) error {
	f := o.Config
	check := func(cfg remote.Config) error {
		if cfg.Workers().SharedPath {
			f.Remote = cfg.String() // absolute, as the script runs from another directory
		}
		if f.Workers < 1 {
			return fmt.Errorf("--workers must be at least 1")
		}
		if err := f.CheckQuantities(); err != nil {
			return err
		}
		if err := launch.CheckSlurm(f); err != nil {
			return err
		}
		if f.Backend != "" {
			if err := model.CheckBackendName(f.Backend); err != nil {
				return fmt.Errorf("--backend: %v", err)
			}
		}
		return nil
	}
	path, name, m, err := startLaunch(c, args, &f, check)
	if err == nil {
		if err = defaultMemory(&f, m); err == nil {
			path, err = filepath.Abs(path)
		}
		if err != nil {
			err = failf(exitInvalid, "fedpipe slurm: %v", err)
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprint(c.stdout, launch.Slurm(f, name, path))
	return nil
}

// startLaunch checks k8s's or slurm's arguments (args, after the flags), the remote and the
// flags (check, given the remote's resolved address) and loads the manifest, which must be
// valid before anything is launched with it (its data need only be where the workers run).
// It returns the manifest's path, the job's name and the manifest.
func startLaunch(c *call, args []string, f *launch.Config, check func(remote.Config) error) (string, string, *manifest.Manifest, error) {
	bad := func(format string, a ...any) error {
		return failf(exitInvalid, "fedpipe %s: "+format, append([]any{c.name}, a...)...)
	}
	if len(args) != 1 {
		return "", "", nil, bad("expected one MANIFEST argument, got %d", len(args))
	}
	if f.Remote == "" {
		f.Remote = os.Getenv(remote.EnvRemote)
	}
	if f.Remote == "" {
		return "", "", nil, bad("name the shared store: --remote s3://BUCKET/PREFIX (or $%s)", remote.EnvRemote)
	}
	cfg, err := remote.Resolve(f.Remote, func(string) string { return "" })
	if err == nil {
		err = check(cfg)
	}
	if err == nil && f.LeaseTTL < time.Second {
		err = fmt.Errorf("--lease-ttl must be at least 1s")
	}
	if err != nil {
		return "", "", nil, bad("%v", err)
	}
	path := args[0]
	m, err := manifest.LoadManifest(path)
	if err != nil {
		return "", "", nil, bad("%v", err)
	}
	name := f.Name
	if name == "" {
		name = launch.DNSLabel(m.Name)
	}
	return path, name, m, nil
}

// defaultMemory sets f's memory, where --memory did not, to what m's largest cell needs.
func defaultMemory(f *launch.Config, m *manifest.Manifest) (err error) {
	if f.Memory == "" {
		f.Memory, f.MemoryNote, err = launch.CellMemory(m)
	}
	return err
}
