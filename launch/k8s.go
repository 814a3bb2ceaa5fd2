package launch

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

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

// K8s returns a ConfigMap holding the manifest and an Indexed Job of f.Workers pods
// running fedpipe workers, as one YAML stream. Credentials stay in the Secret f.Secret,
// referenced by name.
func K8s(f Config, name, manifestFile, manifestText string) (string, error) {
	labels := map[string]string{"app.kubernetes.io/name": "fedpipe", "app.kubernetes.io/instance": name}
	cm := k8sConfigMap{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: k8sMeta{Name: name + "-manifest", Namespace: f.Namespace, Labels: labels},
		Data:     map[string]string{manifestFile: manifestText}}
	job := k8sJob{APIVersion: "batch/v1", Kind: "Job", Metadata: k8sMeta{Name: name, Namespace: f.Namespace, Labels: labels}}
	job.Spec.CompletionMode = "Indexed"
	job.Spec.Completions, job.Spec.Parallelism = f.Workers, f.Workers
	job.Spec.BackoffLimitPerIndex = f.Retries
	job.Spec.Template.Metadata = k8sMeta{Labels: labels}
	job.Spec.Template.Spec.RestartPolicy = "Never"
	c := k8sContainer{Name: "fedpipe", Image: f.Image,
		Args:    workerArgs(f, "/etc/fedpipe/"+manifestFile, "/var/lib/fedpipe/store", "$(JOB_COMPLETION_INDEX)"),
		EnvFrom: []map[string]any{{"secretRef": map[string]string{"name": f.Secret}}},
		Resources: map[string]any{"requests": map[string]string{"cpu": f.CPU, "memory": f.Memory},
			"limits": map[string]string{"memory": f.Memory}},
		VolumeMounts: []map[string]any{{"name": "manifest", "mountPath": "/etc/fedpipe", "readOnly": true},
			{"name": "store", "mountPath": "/var/lib/fedpipe"}}}
	c.Env = append(c.Env, k8sEnv{Name: "CI", Value: "true"}) // plain per-stage log lines
	if f.Endpoint != "" {
		c.Env = append(c.Env, k8sEnv{Name: "AWS_ENDPOINT_URL", Value: f.Endpoint})
	}
	if f.Region != "" {
		c.Env = append(c.Env, k8sEnv{Name: "AWS_REGION", Value: f.Region})
	}
	job.Spec.Template.Spec.Containers = []k8sContainer{c}
	job.Spec.Template.Spec.Volumes = []map[string]any{
		{"name": "manifest", "configMap": map[string]string{"name": cm.Metadata.Name}},
		{"name": "store", "emptyDir": map[string]any{}},
	}
	var b strings.Builder
	b.WriteString("# fedpipe sweep: " + manifestFile + " on " + fmt.Sprint(f.Workers) + " workers sharing " + f.Remote + "\n")
	b.WriteString("# Credentials come from Secret " + f.Secret + ", e.g.\n")
	b.WriteString("#   kubectl create secret generic " + f.Secret + " --from-literal=AWS_ACCESS_KEY_ID=… --from-literal=AWS_SECRET_ACCESS_KEY=…\n")
	if f.MemoryNote != "" {
		b.WriteString("# " + f.MemoryNote + ".\n")
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
