// Package launch writes the jobs that run a sweep on many machines: a Kubernetes
// ConfigMap and Indexed Job (K8s) or an sbatch job-array script (Slurm), each running
// `fedpipe run MANIFEST --worker` processes that share one remote, and the memory a worker
// needs (CellMemory). It checks what it writes into them; it runs nothing.
package launch

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Config is what `fedpipe k8s` and `fedpipe slurm` were asked for: their flags.
type Config struct {
	Remote   string // the shared store's address
	Workers  int
	Static   bool // --shard i/N instead of --worker
	LeaseTTL time.Duration
	CPU      string // per worker, a Kubernetes quantity
	Memory   string // per worker, a Kubernetes quantity
	// MemoryNote says how a default memory was derived ("" when --memory was given).
	MemoryNote string
	DataDir    string // as the workers see it
	Name       string // the job's name ("" for the default, DNSLabel of the manifest's)
	// Kubernetes only.
	Image     string
	Secret    string
	Endpoint  string
	Region    string
	Retries   int
	Namespace string
	// SLURM only.
	Fedpipe   string // the binary as the compute nodes see it
	TimeLimit string
	Partition string
	Account   string
	Gres      string
	Setup     []string
	Output    string
	Backend   string
}

// quantity is a Kubernetes resource quantity as the flags accept it (2, 500m, 4Gi, 1.5G).
var quantity = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$`)

// DNSLabel makes s a DNS-1123 label (what Kubernetes names and SLURM job names can be).
func DNSLabel(s string) string {
	s = strings.ToLower(s)
	s = regexp.MustCompile(`[^a-z0-9-]+`).ReplaceAllString(s, "-")
	s = strings.Trim(s, "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		s = "sweep"
	}
	return "fedpipe-" + s
}

// CheckQuantities says whether --cpu and --memory are quantities a job can take.
func (f Config) CheckQuantities() error {
	if !quantity.MatchString(f.CPU) || f.Memory != "" && !quantity.MatchString(f.Memory) {
		return fmt.Errorf("--cpu %q / --memory %q: want quantities such as 2, 500m, 4Gi", f.CPU, f.Memory)
	}
	return nil
}

// workerArgs is the fedpipe command line of one worker; index is how the engine names
// the worker's index (for --static).
func workerArgs(f Config, manifest, store, index string) []string {
	args := []string{"run", manifest, "--remote", f.Remote, "--store", store, "--lease-ttl", f.LeaseTTL.String()}
	if f.Static {
		args = append(args, "--shard", fmt.Sprintf("%s/%d", index, f.Workers))
	} else {
		args = append(args, "--worker")
	}
	if f.DataDir != "" {
		args = append(args, "--data", f.DataDir)
	}
	if f.Backend != "" {
		args = append(args, "--backend", f.Backend)
	}
	return args
}

// ShellJoin quotes each of args for a POSIX shell and joins them with spaces: a command
// line the user can paste (-S 'seeds=[1,2]' keeps its brackets from the shell).
func ShellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// ShellQuote quotes s for a POSIX shell, leaving ${…} expansions of the form the script
// itself writes unquoted.
func ShellQuote(s string) string {
	if regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`).MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
