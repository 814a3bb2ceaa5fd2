package launch

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// What Slurm passes to #SBATCH lines, checked before a script is printed: a
// value sbatch would refuse (or one that would break out of its line) is exit 2 naming
// the flag, not a job that fails in the queue hours later.
var (
	// slurmTime is sbatch's --time: minutes, minutes:seconds, hours:minutes:seconds,
	// days-hours, days-hours:minutes, days-hours:minutes:seconds, or unlimited.
	slurmTime = regexp.MustCompile(`^([0-9]+(:[0-9]{1,2}){0,2}|[0-9]+-[0-9]{1,2}(:[0-9]{1,2}){0,2}|UNLIMITED|unlimited|INFINITE|infinite)$`)
	// slurmName is a partition or account name (a comma-separated list of partitions).
	slurmName = regexp.MustCompile(`^[A-Za-z0-9_.+-]+(,[A-Za-z0-9_.+-]+)*$`)
	// slurmGres is --gres: name[:type][:count], comma-separated.
	slurmGres = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(:[A-Za-z0-9_.-]+)?(:[0-9]+)?(,[A-Za-z][A-Za-z0-9_]*(:[A-Za-z0-9_.-]+)?(:[0-9]+)?)*$`)
	// slurmCPUs is --cpus-per-task: a whole number of CPUs.
	slurmCPUs = regexp.MustCompile(`^[1-9][0-9]*$`)
)

// CheckSlurm validates the flags that become #SBATCH lines or script lines (the backend
// name is the caller's to check).
func CheckSlurm(f Config) error {
	if !slurmCPUs.MatchString(f.CPU) {
		return fmt.Errorf("--cpu %q: SLURM allocates whole CPUs per task (--cpus-per-task); give a whole number such as 2", f.CPU)
	}
	if strings.HasSuffix(f.Memory, "m") {
		return fmt.Errorf("--memory %q: millibytes are not a memory size; give e.g. 4Gi or 4000Mi", f.Memory)
	}
	if !slurmTime.MatchString(f.TimeLimit) {
		return fmt.Errorf("--time %q: want minutes, HH:MM:SS, D-HH, D-HH:MM:SS or UNLIMITED (sbatch --time)", f.TimeLimit)
	}
	if f.Partition != "" && !slurmName.MatchString(f.Partition) {
		return fmt.Errorf("--partition %q: want a partition name (letters, digits, _ . + -; a comma-separated list for several)", f.Partition)
	}
	if f.Account != "" && !slurmName.MatchString(f.Account) || strings.Contains(f.Account, ",") {
		return fmt.Errorf("--account %q: want one account name (letters, digits, _ . + -)", f.Account)
	}
	if f.Gres != "" && !slurmGres.MatchString(f.Gres) {
		return fmt.Errorf("--gres %q: want NAME[:TYPE][:COUNT], e.g. gpu:1 or gpu:a100:2", f.Gres)
	}
	if f.Output != "" && (strings.ContainsAny(f.Output, "\n\r\x00") || strings.TrimSpace(f.Output) != f.Output) {
		return fmt.Errorf("--output %q: want a path on one line, without leading or trailing spaces", f.Output)
	}
	if strings.ContainsAny(f.Name, "\n\r\x00 ") {
		return fmt.Errorf("--name %q: want a job name without spaces or line breaks", f.Name)
	}
	for _, s := range f.Setup {
		if strings.ContainsAny(s, "\n\r\x00") || strings.TrimSpace(s) == "" {
			return fmt.Errorf("--setup %q: want one non-empty shell line (repeat --setup for several)", s)
		}
	}
	if strings.ContainsAny(f.Fedpipe, "\n\r\x00") || f.Fedpipe == "" {
		return fmt.Errorf("--fedpipe %q: want the path of the fedpipe binary on the compute nodes", f.Fedpipe)
	}
	return nil
}

// slurmMem converts a Kubernetes-style memory quantity to sbatch's --mem (K, M, G, T
// units; a plain number is megabytes to sbatch, as it is to fedpipe's docs).
func slurmMem(q string) string {
	for _, u := range []struct{ k8s, slurm string }{{"Ki", "K"}, {"Mi", "M"}, {"Gi", "G"}, {"Ti", "T"}, {"k", "K"}} {
		if strings.HasSuffix(q, u.k8s) {
			return strings.TrimSuffix(q, u.k8s) + u.slurm
		}
	}
	return q
}

// Slurm returns an sbatch script for a job array of f.Workers fedpipe workers.
//
// SLURM stops a task (scancel, its time limit, preemption) by sending SIGTERM to every
// process of the task and SIGKILL KillWait seconds later. fedpipe runs in the background
// so that the script can wait for it: on the signal it stops training, saves and pushes
// its checkpoint and closes its store, and only then does the script remove the store.
// (A shell that died of the signal would remove the store under a fedpipe still closing
// it.) The script passes the signal on as well, for `scancel --batch`, which signals the
// script alone.
func Slurm(f Config, name, manifest string) string {
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	output := f.Output
	if output == "" {
		output = name + "-%A_%a.out"
	}
	line("#!/bin/bash")
	line("#SBATCH --job-name=%s", name)
	line("#SBATCH --array=0-%d", f.Workers-1)
	line("#SBATCH --ntasks=1")
	line("#SBATCH --cpus-per-task=%s", f.CPU)
	line("#SBATCH --mem=%s", slurmMem(f.Memory))
	line("#SBATCH --time=%s", f.TimeLimit)
	line("#SBATCH --output=%s", output)
	for _, o := range []struct{ key, value string }{{"partition", f.Partition}, {"account", f.Account}, {"gres", f.Gres}} {
		if o.value != "" {
			line("#SBATCH --%s=%s", o.key, o.value)
		}
	}
	line("#")
	line("# fedpipe sweep: %s on %d workers sharing %s.", filepath.Base(manifest), f.Workers, f.Remote)
	if f.MemoryNote != "" {
		line("# %s.", f.MemoryNote)
	}
	if strings.HasPrefix(f.Remote, "s3://") {
		line("# Submit with `sbatch`; the job inherits the submitting shell's environment, so export")
		line("# AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL, AWS_REGION) there, or")
		line("# keep them in ~/.aws/credentials. No credential is written into this script.")
	} else {
		line("# Submit with `sbatch`. The remote is a directory every node mounts (NFS, Lustre, ...).")
	}
	line("# A task that is cancelled, preempted or reaches its time limit saves its checkpoint in the")
	line("# remote; another task, or this script submitted again, takes its stage over from there.")
	line(`export CI=true  # plain per-stage log lines`)
	if len(f.Setup) > 0 {
		line("set -e  # a setup line that fails ends the task")
		for _, s := range f.Setup {
			line("%s", s)
		}
		line("set +e")
	}
	line("set -uo pipefail")
	line(`store="${SLURM_TMPDIR:-${TMPDIR:-/tmp}}/fedpipe-${SLURM_ARRAY_JOB_ID}-${SLURM_ARRAY_TASK_ID}"`)
	args := workerArgs(f, manifest, "STORE", "INDEX")
	quoted := []string{ShellQuote(f.Fedpipe)}
	for _, a := range args {
		switch {
		case a == "STORE":
			quoted = append(quoted, `"$store"`)
		case strings.HasPrefix(a, "INDEX/"):
			quoted = append(quoted, `"${SLURM_ARRAY_TASK_ID}`+strings.TrimPrefix(a, "INDEX")+`"`)
		default:
			quoted = append(quoted, ShellQuote(a))
		}
	}
	line("%s &", strings.Join(quoted, " "))
	line(`pid=$!`)
	line(`trap 'kill -TERM "$pid" 2>/dev/null' TERM INT`)
	line(`rc=0`)
	line(`wait "$pid" || rc=$?`)
	line(`while kill -0 "$pid" 2>/dev/null; do  # a signal ended the wait: fedpipe is still saving`)
	line(`	rc=0`)
	line(`	wait "$pid" || rc=$?`)
	line(`done`)
	line(`rm -rf "$store"`)
	line(`exit "$rc"`)
	return b.String()
}
