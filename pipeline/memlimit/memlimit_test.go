package memlimit

import (
	"io/fs"
	"os"
	"testing"
)

func TestCap(t *testing.T) {
	const v1Unlimited = "9223372036854771712\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		env   map[string]string
		want  int64
	}{
		{"no cgroup, no job", nil, nil, 0},
		{"v2 pod at its own root", map[string]string{
			"/proc/self/cgroup":         "0::/\n",
			"/sys/fs/cgroup/memory.max": "4294967296\n",
			"/sys/fs/cgroup/cpu.max":    "200000 100000\n",
		}, nil, 4 << 30},
		{"v2 without a limit", map[string]string{
			"/proc/self/cgroup":         "0::/user.slice\n",
			"/sys/fs/cgroup/memory.max": "max\n",
		}, nil, 0},
		{"v2 nested path", map[string]string{
			"/proc/self/cgroup": "0::/system.slice/slurmstepd.scope/job_7/step_0\n",
			"/sys/fs/cgroup/system.slice/slurmstepd.scope/job_7/step_0/memory.max": "2147483648",
			"/sys/fs/cgroup/memory.max": "max",
		}, nil, 2 << 30},
		{"v1 as on this machine: unlimited", map[string]string{
			"/proc/self/cgroup": "5:devices:/\n4:memory:/process_api/669b\n0::/\n",
			"/sys/fs/cgroup/memory/process_api/669b/memory.limit_in_bytes": v1Unlimited,
			"/sys/fs/cgroup/memory/memory.limit_in_bytes":                  v1Unlimited,
		}, nil, 0},
		{"v1 SLURM cgroup plugin, combined controllers", map[string]string{
			"/proc/self/cgroup": "7:cpuacct,memory:/slurm/uid_0/job_12/step_0\n",
			"/sys/fs/cgroup/memory/slurm/uid_0/job_12/step_0/memory.limit_in_bytes": "3221225472\n",
		}, nil, 3 << 30},
		{"v1 container: path not under the mount", map[string]string{
			"/proc/self/cgroup":                           "4:memory:/kubepods/pod1/abc\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824",
		}, nil, 1 << 30},
		{"SLURM --mem without a cgroup limit", nil, map[string]string{"SLURM_MEM_PER_NODE": "4096"}, 4 << 30},
		{"SLURM --mem-per-cpu", nil, map[string]string{"SLURM_MEM_PER_CPU": "1500", "SLURM_CPUS_PER_TASK": "2"}, 3000 << 20},
		{"the smaller of cgroup and job", map[string]string{
			"/proc/self/cgroup":         "0::/\n",
			"/sys/fs/cgroup/memory.max": "8589934592",
		}, map[string]string{"SLURM_MEM_PER_NODE": "4096"}, 4 << 30},
		{"garbage ignored", map[string]string{
			"/proc/self/cgroup":         "junk\n0::/\n",
			"/sys/fs/cgroup/memory.max": "lots",
		}, map[string]string{"SLURM_MEM_PER_NODE": "-5"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := func(name string) ([]byte, error) {
				if s, ok := tc.files[name]; ok {
					return []byte(s), nil
				}
				return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
			}
			env := func(name string) string { return tc.env[name] }
			if got := Cap(read, env); got != tc.want {
				t.Errorf("Cap = %d, want %d", got, tc.want)
			}
		})
	}
}
