package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const launchManifest = `name: Launch Sweep_1
dataset: {name: synthetic, devices: 10}
partition: {scheme: natural}
model: {arch: logreg}
train: {rounds: 2}
methods: [{name: fedavg}, {name: local}]
`

// The k8s output is a ConfigMap and an Indexed Job that decode strictly (no unknown
// field) into the Kubernetes API's own types, with what the flags asked for.
func TestK8sJobDecodesIntoBatchV1(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLAUNCHTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "launch-secret-value")
	m := writeManifest(t, t.TempDir(), launchManifest)
	code, out, errOut := fedpipe(t, "k8s", m, "--image", "registry.example/fedpipe:v1", "--remote", "s3://lab-cache/sweeps",
		"--workers", "6", "--cpu", "1500m", "--memory", "3Gi", "--retries", "2", "--secret", "lab-s3",
		"--endpoint", "http://minio.lab:9000", "--namespace", "ml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "AKIDLAUNCHTEST") || strings.Contains(out, "launch-secret-value") {
		t.Fatal("a credential from the environment was written into the job")
	}
	docs := strings.SplitAfter(out, "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("want 2 YAML documents (ConfigMap, Job), got %d:\n%s", len(docs), out)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &cm); err != nil {
		t.Fatalf("ConfigMap: %v\n%s", err, docs[0])
	}
	if cm.Kind != "ConfigMap" || cm.Data["m.yaml"] != launchManifest || cm.Namespace != "ml" {
		t.Fatalf("ConfigMap %s/%s holds %q", cm.Namespace, cm.Name, cm.Data)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil {
		t.Fatalf("Job: %v\n%s", err, docs[1])
	}
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name != "fedpipe-launch-sweep-1" || job.Namespace != "ml" {
		t.Fatalf("Job header: %s %s %s/%s", job.APIVersion, job.Kind, job.Namespace, job.Name)
	}
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatal("completionMode is not Indexed")
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != 6 || *s.Parallelism != 6 {
		t.Fatalf("completions %v, parallelism %v; want 6 and 6", s.Completions, s.Parallelism)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 2 {
		t.Fatalf("backoffLimitPerIndex = %v, want 2", s.BackoffLimitPerIndex)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("pod: restartPolicy %q, %d containers", pod.RestartPolicy, len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != "registry.example/fedpipe:v1" {
		t.Errorf("image %q", c.Image)
	}
	wantArgs := []string{"run", "/etc/fedpipe/m.yaml", "--remote", "s3://lab-cache/sweeps", "--store", "/var/lib/fedpipe/store", "--lease-ttl", "1m0s", "--worker"}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args %q, want %q", c.Args, wantArgs)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "lab-s3" {
		t.Errorf("credentials not taken from Secret lab-s3 by reference: %+v", c.EnvFrom)
	}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "AWS_ACCESS") || strings.HasPrefix(e.Name, "AWS_SECRET") {
			t.Errorf("credential variable %s set by value", e.Name)
		}
	}
	if !slices.Contains(c.Env, corev1.EnvVar{Name: "AWS_ENDPOINT_URL", Value: "http://minio.lab:9000"}) {
		t.Errorf("endpoint not passed: %+v", c.Env)
	}
	if q := c.Resources.Requests[corev1.ResourceCPU]; q.String() != "1500m" {
		t.Errorf("cpu request %s", q.String())
	}
	if q := c.Resources.Requests[corev1.ResourceMemory]; q.String() != "3Gi" {
		t.Errorf("memory request %s", q.String())
	}
	// The manifest reaches the pod through the ConfigMap mounted where the args look.
	mounted := false
	for _, v := range pod.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cm.Name {
			for _, vm := range c.VolumeMounts {
				mounted = mounted || (vm.Name == v.Name && vm.MountPath == "/etc/fedpipe")
			}
		}
	}
	if !mounted {
		t.Error("the manifest's ConfigMap is not mounted at /etc/fedpipe")
	}

	// --static: each pod runs its index's shard.
	_, out, _ = fedpipe(t, "k8s", m, "--image", "img", "--remote", "s3://lab-cache/sweeps", "--workers", "3", "--static")
	docs = strings.SplitAfter(out, "\n---\n")
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil {
		t.Fatal(err)
	}
	if args := job.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "$(JOB_COMPLETION_INDEX)/3") || slices.Contains(args, "--worker") {
		t.Errorf("static args %q", args)
	}
}

// sbatchOptions parses a script's #SBATCH lines as sbatch does: the leading comment block
// only, "--key=value" or "--key value".
func sbatchOptions(t *testing.T, script string) map[string]string {
	t.Helper()
	opts := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(script))
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			if !strings.HasPrefix(line, "#!") {
				t.Fatalf("no shebang: %q", line)
			}
			first = false
			continue
		}
		if !strings.HasPrefix(line, "#") {
			break // sbatch stops at the first command
		}
		rest, ok := strings.CutPrefix(line, "#SBATCH ")
		if !ok {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(rest, "--"), "=")
		if !ok {
			k, v, _ = strings.Cut(strings.TrimPrefix(rest, "--"), " ")
		}
		opts[k] = v
	}
	return opts
}

func TestSlurmScriptParses(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "launch-secret-value")
	m := writeManifest(t, t.TempDir(), launchManifest)
	code, out, errOut := fedpipe(t, "slurm", m, "--remote", "s3://lab-cache/sweeps", "--workers", "5",
		"--cpu", "4", "--memory", "8Gi", "--time", "02:00:00", "--partition", "cpu", "--fedpipe", "/opt/fedpipe/bin/fedpipe",
		"--account", "lab-42", "--gres", "gpu:a100:1", "--backend", "xla:cuda", "--output", "/scratch/logs/%x-%A_%a.log",
		"--setup", "module load cuda/12.4", "--setup", "source ~/venvs/fp/bin/activate")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "launch-secret-value") {
		t.Fatal("a credential was written into the script")
	}
	opts := sbatchOptions(t, out)
	want := map[string]string{"job-name": "fedpipe-launch-sweep-1", "array": "0-4", "cpus-per-task": "4", "mem": "8G",
		"time": "02:00:00", "partition": "cpu", "ntasks": "1", "output": "/scratch/logs/%x-%A_%a.log",
		"account": "lab-42", "gres": "gpu:a100:1"}
	for k, v := range want {
		if opts[k] != v {
			t.Errorf("#SBATCH --%s = %q, want %q", k, opts[k], v)
		}
	}
	abs, _ := filepath.Abs(m)
	if !strings.Contains(out, "/opt/fedpipe/bin/fedpipe run "+abs+" --remote s3://lab-cache/sweeps --store \"$store\" --lease-ttl 1m0s --worker --backend xla:cuda &\n") {
		t.Errorf("worker command missing:\n%s", out)
	}
	// The setup lines run in order, before fedpipe, and a failing one ends the task.
	setup := strings.Index(out, "set -e ")
	cuda, venv := strings.Index(out, "\nmodule load cuda/12.4\n"), strings.Index(out, "\nsource ~/venvs/fp/bin/activate\n")
	if setup < 0 || cuda < setup || venv < cuda || venv > strings.Index(out, "/opt/fedpipe/bin/fedpipe run") {
		t.Errorf("setup lines missing or out of order:\n%s", out)
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		p := filepath.Join(t.TempDir(), "sweep.sh")
		os.WriteFile(p, []byte(out), 0o755)
		if b, err := exec.Command(bash, "-n", p).CombinedOutput(); err != nil {
			t.Fatalf("bash -n: %v\n%s", err, b)
		}
	}
	_, out, _ = fedpipe(t, "slurm", m, "--remote", "s3://lab-cache/sweeps", "--workers", "5", "--static")
	if !strings.Contains(out, `--shard "${SLURM_ARRAY_TASK_ID}/5"`) || strings.Contains(out, "--worker") {
		t.Errorf("static script:\n%s", out)
	}
	// A directory remote (on a filesystem the nodes share) reaches the script as an
	// absolute file URL: the tasks run from another working directory.
	_, out, errOut = fedpipe(t, "slurm", m, "--remote", "shared/cache", "--workers", "2")
	wd, _ := os.Getwd()
	if want := " --remote file://" + filepath.Join(wd, "shared/cache") + " --store"; !strings.Contains(out, want) {
		t.Errorf("a relative directory remote: want %q in the script:\n%s%s", want, out, errOut)
	}
}

func TestLaunchersRejectBadFlags(t *testing.T) {
	m := writeManifest(t, t.TempDir(), launchManifest)
	t.Setenv("FEDPIPE_REMOTE", "")
	for _, args := range [][]string{
		{"k8s", m, "--remote", "s3://b-1/p", "--workers", "2"},                                         // no image
		{"k8s", m, "--image", "i", "--workers", "2"},                                                   // no remote
		{"k8s", m, "--image", "i", "--remote", "s3://b-1/p"},                                           // no workers
		{"k8s", m, "--image", "i", "--remote", "http://b-1/p", "--workers", "2"},                       // not s3
		{"k8s", m, "--image", "i", "--remote", "file:///srv/cache", "--workers", "2"},                  // pods share no directory
		{"slurm", m, "--remote", "file://host/srv/cache", "--workers", "2"},                            // a file URL with a host
		{"slurm", m, "--remote", "s3://b-1/p", "--workers", "2", "--memory", "lots"},                   // bad quantity
		{"slurm", m, "--remote", "s3://b-1/p", "--workers", "2", "--cpu", "500m"},                      // SLURM: whole CPUs
		{"slurm", m, "--remote", "s3://b-1/p", "--workers", "2", "--time", "2 hours"},                  // not sbatch's format
		{"slurm", m, "--remote", "s3://b-1/p", "--workers", "2", "--time", "1:2:3:4"},                  // too many fields
		{"slurm", m, "--remote", "s3://b-1/p", "--workers", "2", "--partition", "gpu\n#SBATCH --x"},    // breaks out of its line
		{"slurm", m, "--remote", "s3://b-1/p", "--workers", "2", "--account", "a b"},                   // a space
		{"slurm", m, "--remote", "s3://b-1/p", "--workers", "2", "--gres", "gpu:"},                     // no count
		{"slurm", m, "--remote", "s3://b-1/p", "--workers", "2", "--setup", "module load x\nrm -rf ~"}, // two lines in one
		{"slurm", m, "--remote", "s3://b-1/p", "--workers", "2", "--output", " "},                      // blank
		{"slurm", m, "--remote", "s3://b-1/p", "--workers", "2", "--backend", "tpu:x"},                 // unknown backend
		{"slurm", filepath.Join(t.TempDir(), "none.yaml"), "--remote", "s3://b-1/p", "--workers", "2"}, // no manifest
	} {
		code, _, errOut := fedpipe(t, args...)
		if code != exitInvalid || errOut == "" {
			t.Errorf("%q: exit %d (%q), want %d with a message", args, code, errOut, exitInvalid)
		}
		// A bad SLURM value is named by its flag.
		if flag := args[len(args)-2]; args[0] == "slurm" && strings.HasPrefix(flag, "--") && flag != "--workers" && !strings.Contains(errOut, flag) {
			t.Errorf("%q: the message does not name %s: %q", args, flag, errOut)
		}
	}
}
