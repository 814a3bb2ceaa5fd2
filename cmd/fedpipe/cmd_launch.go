package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/manifest"
)

// launchFlags are the flags of `fedpipe k8s` and `fedpipe slurm`.
type launchFlags struct {
	remote   string
	workers  int
	static   bool
	leaseTTL time.Duration
	cpu      string
	memory   string
	// memoryNote says how a default memory was derived ("" when --memory was given).
	memoryNote string
	dataDir    string
	name       string
	image      string
	secret     string
	endpoint   string
	region     string
	retries    int
	namespace  string
	fedpipe    string
	timeLimit  string
	partition  string
	account    string
	gres       string
	setup      []string
	output     string
	backend    string
}

// quantity is a Kubernetes resource quantity as the flags accept it (2, 500m, 4Gi, 1.5G).
var quantity = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$`)

// dnsLabel makes s a DNS-1123 label (what Kubernetes names and SLURM job names can be).
func dnsLabel(s string) string {
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

// launcher implements `fedpipe k8s` and `fedpipe slurm`: print a job for an engine that
// runs N `fedpipe run --worker` processes sharing one remote.
func launcher(c *call) error {
	cmd, args, stdout := c.name, c.args, c.stdout
	fs := c.flags()
	var f launchFlags
	fs.StringVar(&f.remote, "remote", "", "the shared store s3://BUCKET/PREFIX, or (slurm) file:///DIR on a filesystem every node mounts (default $"+remote.EnvRemote+")")
	fs.IntVar(&f.workers, "workers", 0, "how many workers run at once (required)")
	fs.BoolVar(&f.static, "static", false, "split statically: worker i runs --shard i/N instead of --worker")
	fs.DurationVar(&f.leaseTTL, "lease-ttl", remote.DefaultLeaseTTL, "workers' lease TTL (a dead worker's stage is taken over after it)")
	fs.StringVar(&f.cpu, "cpu", "2", "CPUs per worker")
	fs.StringVar(&f.memory, "memory", "", "memory per worker (default: what the manifest's largest cell needs, from fedpipe's estimate; see the job's comment)")
	fs.StringVar(&f.dataDir, "data", "", "dataset directory as the workers see it (passed as --data)")
	fs.StringVar(&f.name, "name", "", "job name (default fedpipe-<manifest name>)")
	if cmd == "k8s" {
		fs.StringVar(&f.image, "image", "", "container image holding fedpipe (required; see the Dockerfile)")
		fs.StringVar(&f.secret, "secret", "fedpipe-s3", "Secret whose keys (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, optionally AWS_ENDPOINT_URL, AWS_REGION) become the workers' environment")
		fs.StringVar(&f.endpoint, "endpoint", "", "S3 endpoint for the workers (AWS_ENDPOINT_URL; default: from the Secret, else Amazon S3)")
		fs.StringVar(&f.region, "region", "", "S3 region for the workers (AWS_REGION; default: from the Secret)")
		fs.IntVar(&f.retries, "retries", 3, "backoffLimitPerIndex: how often a failed worker is restarted (it resumes)")
		fs.StringVar(&f.namespace, "namespace", "", "namespace of the Job and its ConfigMap (default: kubectl's)")
	} else {
		fs.StringVar(&f.fedpipe, "fedpipe", "fedpipe", "the fedpipe binary as the compute nodes see it")
		fs.StringVar(&f.timeLimit, "time", "24:00:00", "time limit per worker (#SBATCH --time)")
		fs.StringVar(&f.partition, "partition", "", "SLURM partition (#SBATCH --partition)")
		fs.StringVar(&f.account, "account", "", "account the job is charged to (#SBATCH --account)")
		fs.StringVar(&f.gres, "gres", "", "generic resources per task, e.g. gpu:1 or gpu:a100:1 for XLA workers (#SBATCH --gres); pair with --backend")
		fs.StringArrayVar(&f.setup, "setup", nil, "a shell line each task runs before fedpipe, e.g. 'module load cuda/12.4' or 'source ~/venv/bin/activate' (repeatable, in order)")
		fs.StringVar(&f.output, "output", "", "path of each task's log, with sbatch's patterns (#SBATCH --output; default <job name>-%A_%a.out in the submission directory)")
		fs.StringVar(&f.backend, "backend", "", "GoMLX backend the workers train with, e.g. xla:cuda (passed as --backend; default the workers' $GOMLX_BACKEND, else the CPU backend)")
	}
	fs.Usage = func() {
		what := "Prints a Kubernetes ConfigMap (the manifest) and an Indexed Job of --workers pods, each running\n`fedpipe run MANIFEST --remote URL --worker`. Apply with: fedpipe k8s … | kubectl apply -f -"
		usage := "fedpipe k8s MANIFEST --image IMG --remote s3://BUCKET/PREFIX --workers N [flags]"
		if cmd == "slurm" {
			what = "Prints an sbatch script for a job array of --workers tasks, each running\n`fedpipe run MANIFEST --remote URL --worker`. Submit with: fedpipe slurm … > sweep.sh && sbatch sweep.sh\nCredentials come from the environment sbatch passes on (or ~/.aws) and are never written into the script."
			usage = "fedpipe slurm MANIFEST --remote s3://BUCKET/PREFIX|file:///DIR --workers N [flags]"
		}
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n\nFlags:\n%s", usage, what, fs.FlagUsages())
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	bad := func(format string, a ...any) error {
		return failf(exitInvalid, "fedpipe %s: "+format, append([]any{cmd}, a...)...)
	}
	if fs.NArg() != 1 {
		return bad("expected one MANIFEST argument, got %d", fs.NArg())
	}
	if f.remote == "" {
		f.remote = os.Getenv(remote.EnvRemote)
	}
	if f.remote == "" {
		return bad("name the shared store: --remote s3://BUCKET/PREFIX (or $%s)", remote.EnvRemote)
	}
	cfg, err := remote.Resolve(f.remote, func(string) string { return "" })
	if err != nil {
		return bad("%v", err)
	}
	if cfg.Dir != "" {
		if cmd == "k8s" {
			return bad("a directory remote (%s) is not shared by pods: give --remote s3://BUCKET/PREFIX", cfg)
		}
		f.remote = cfg.String() // absolute, as the script runs from another directory
	}
	if f.workers < 1 {
		return bad("--workers must be at least 1")
	}
	if cmd == "k8s" && f.image == "" {
		return bad("--image is required (build one with the Dockerfile in the repository)")
	}
	if !quantity.MatchString(f.cpu) || f.memory != "" && !quantity.MatchString(f.memory) {
		return bad("--cpu %q / --memory %q: want quantities such as 2, 500m, 4Gi", f.cpu, f.memory)
	}
	if cmd == "slurm" {
		if err := checkSlurmFlags(f); err != nil {
			return bad("%v", err)
		}
	}
	if f.leaseTTL < time.Second {
		return bad("--lease-ttl must be at least 1s")
	}
	path := fs.Arg(0)
	// The manifest must be valid before anything is launched with it (its data need
	// only be where the workers run).
	m, err := manifest.LoadManifest(path)
	if err != nil {
		return bad("%v", err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return bad("%v", err)
	}
	if f.memory == "" {
		if f.memory, f.memoryNote, err = cellMemory(m); err != nil {
			return bad("%v", err)
		}
	}
	name := f.name
	if name == "" {
		name = dnsLabel(m.Name)
	}
	if cmd == "k8s" {
		out, err := k8sManifests(f, name, filepath.Base(path), string(text))
		if err != nil {
			return failf(exitFailure, "fedpipe k8s: %v", err)
		}
		fmt.Fprint(stdout, out)
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return bad("%v", err)
	}
	fmt.Fprint(stdout, slurmScript(f, name, abs))
	return nil
}

// workerArgs is the fedpipe command line of one worker; index is how the engine names
// the worker's index (for --static).
func workerArgs(f launchFlags, manifest, store, index string) []string {
	args := []string{"run", manifest, "--remote", f.remote, "--store", store, "--lease-ttl", f.leaseTTL.String()}
	if f.static {
		args = append(args, "--shard", fmt.Sprintf("%s/%d", index, f.workers))
	} else {
		args = append(args, "--worker")
	}
	if f.dataDir != "" {
		args = append(args, "--data", f.dataDir)
	}
	if f.backend != "" {
		args = append(args, "--backend", f.backend)
	}
	return args
}

// Kubernetes objects, as much of them as the launcher writes (field names as the API's).
type k8sMeta struct {
	Name      string            `yaml:"name,omitempty"`
	Namespace string            `yaml:"namespace,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`
}

type k8sConfigMap struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   k8sMeta           `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
}

type k8sEnv struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

type k8sContainer struct {
	Name         string           `yaml:"name"`
	Image        string           `yaml:"image"`
	Args         []string         `yaml:"args"`
	Env          []k8sEnv         `yaml:"env,omitempty"`
	EnvFrom      []map[string]any `yaml:"envFrom"`
	Resources    map[string]any   `yaml:"resources"`
	VolumeMounts []map[string]any `yaml:"volumeMounts"`
}

type k8sJobSpec struct {
	CompletionMode       string `yaml:"completionMode"`
	Completions          int    `yaml:"completions"`
	Parallelism          int    `yaml:"parallelism"`
	BackoffLimitPerIndex int    `yaml:"backoffLimitPerIndex"`
	Template             struct {
		Metadata k8sMeta `yaml:"metadata"`
		Spec     struct {
			RestartPolicy string           `yaml:"restartPolicy"`
			Containers    []k8sContainer   `yaml:"containers"`
			Volumes       []map[string]any `yaml:"volumes"`
		} `yaml:"spec"`
	} `yaml:"template"`
}

type k8sJob struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   k8sMeta    `yaml:"metadata"`
	Spec       k8sJobSpec `yaml:"spec"`
}

// k8sManifests returns a ConfigMap holding the manifest and an Indexed Job of f.workers pods
// running fedpipe workers, as one YAML stream. Credentials stay in the Secret f.secret,
// referenced by name.
func k8sManifests(f launchFlags, name, manifestFile, manifestText string) (string, error) {
	labels := map[string]string{"app.kubernetes.io/name": "fedpipe", "app.kubernetes.io/instance": name}
	cm := k8sConfigMap{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: k8sMeta{Name: name + "-manifest", Namespace: f.namespace, Labels: labels},
		Data:     map[string]string{manifestFile: manifestText}}
	job := k8sJob{APIVersion: "batch/v1", Kind: "Job", Metadata: k8sMeta{Name: name, Namespace: f.namespace, Labels: labels}}
	job.Spec.CompletionMode = "Indexed"
	job.Spec.Completions, job.Spec.Parallelism = f.workers, f.workers
	job.Spec.BackoffLimitPerIndex = f.retries
	job.Spec.Template.Metadata = k8sMeta{Labels: labels}
	job.Spec.Template.Spec.RestartPolicy = "Never"
	c := k8sContainer{Name: "fedpipe", Image: f.image,
		Args:    workerArgs(f, "/etc/fedpipe/"+manifestFile, "/var/lib/fedpipe/store", "$(JOB_COMPLETION_INDEX)"),
		EnvFrom: []map[string]any{{"secretRef": map[string]string{"name": f.secret}}},
		Resources: map[string]any{"requests": map[string]string{"cpu": f.cpu, "memory": f.memory},
			"limits": map[string]string{"memory": f.memory}},
		VolumeMounts: []map[string]any{{"name": "manifest", "mountPath": "/etc/fedpipe", "readOnly": true},
			{"name": "store", "mountPath": "/var/lib/fedpipe"}}}
	c.Env = append(c.Env, k8sEnv{Name: "CI", Value: "true"}) // plain per-stage log lines
	if f.endpoint != "" {
		c.Env = append(c.Env, k8sEnv{Name: "AWS_ENDPOINT_URL", Value: f.endpoint})
	}
	if f.region != "" {
		c.Env = append(c.Env, k8sEnv{Name: "AWS_REGION", Value: f.region})
	}
	job.Spec.Template.Spec.Containers = []k8sContainer{c}
	job.Spec.Template.Spec.Volumes = []map[string]any{
		{"name": "manifest", "configMap": map[string]string{"name": cm.Metadata.Name}},
		{"name": "store", "emptyDir": map[string]any{}},
	}
	var b strings.Builder
	b.WriteString("# fedpipe sweep: " + manifestFile + " on " + fmt.Sprint(f.workers) + " workers sharing " + f.remote + "\n")
	b.WriteString("# Credentials come from Secret " + f.secret + ", e.g.\n")
	b.WriteString("#   kubectl create secret generic " + f.secret + " --from-literal=AWS_ACCESS_KEY_ID=… --from-literal=AWS_SECRET_ACCESS_KEY=…\n")
	if f.memoryNote != "" {
		b.WriteString("# " + f.memoryNote + ".\n")
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(cm); err != nil {
		return "", err
	}
	if err := enc.Encode(job); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// shellJoin quotes each of args for a POSIX shell and joins them with spaces: a command
// line the user can paste (-S 'seeds=[1,2]' keeps its brackets from the shell).
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// shellQuote quotes s for a POSIX shell, leaving ${…} expansions of the form the script
// itself writes unquoted.
func shellQuote(s string) string {
	if regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`).MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
