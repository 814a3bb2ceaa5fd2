// Package slurmtest starts a real one-node SLURM cluster for tests: Debian's slurm-wlm
// (slurmctld and slurmd) with munge, configured in a temporary directory (its own ports,
// state, spool and logs; nothing under /etc is written), so that a test can submit jobs with
// sbatch exactly as a user would and read the scheduler's own accounting (sacct -c, from
// the jobcomp/filetxt log).
//
// It needs root (slurmd runs jobs as their submitter and tracks their processes) and the
// commands of slurm-wlm and munge. Without them, Start skips the test saying what is
// missing, except under CI=true, where that is a failure. A munged already running is
// used; otherwise Start starts one and the cleanup stops it.
package slurmtest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// commands the cluster needs, from the slurm-wlm and munge packages.
var commands = []string{"slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol", "sacct", "sinfo", "munge", "unmunge", "munged"}

// A Cluster is a running one-node SLURM cluster.
type Cluster struct {
	// Dir holds slurm.conf, cgroup.conf, the daemons' state, spool and logs, and the
	// job completion log sacct -c reads.
	Dir string
	// Conf is the path of slurm.conf (SLURM_CONF for the client commands).
	Conf string
	t    *testing.T
}

// Start starts a cluster for t and stops it when t ends.
func Start(t *testing.T) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a SLURM cluster")
	}
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			if _, err := os.Stat("/usr/sbin/" + c); err != nil {
				missing = append(missing, c)
			}
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("no SLURM cluster for this test: missing %s (as root: apt-get install slurm-wlm munge)", strings.Join(missing, ", "))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	c := &Cluster{Dir: t.TempDir(), t: t}
	c.Conf = filepath.Join(c.Dir, "slurm.conf")
	c.startMunge()
	if err := c.writeConfig(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stop)
	for _, d := range []string{"slurmctld", "slurmd"} {
		if out, err := exec.Command(sbin(d), "-f", c.Conf).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s\n%s", d, err, out, c.log(d))
		}
	}
	// The node is idle a few seconds after slurmd starts; a job submitted before would
	// wait for it anyway, but a test's timings should not include that.
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, _ := c.Command("sinfo", "-h", "-o", "%T").Output()
		if strings.TrimSpace(string(out)) == "idle" {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node is not idle after 90 s (sinfo: %q)\n%s\n%s", out, c.log("slurmctld"), c.log("slurmd"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func sbin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return "/usr/sbin/" + name
}

// startMunge starts munged unless one answers already; the cleanup stops the one it
// started.
func (c *Cluster) startMunge() {
	if mungeWorks() {
		return
	}
	if err := os.MkdirAll("/run/munge", 0o755); err != nil {
		c.t.Fatal(err)
	}
	if out, err := exec.Command("chown", "munge:munge", "/run/munge").CombinedOutput(); err != nil {
		c.t.Fatalf("chown /run/munge: %v\n%s", err, out)
	}
	if out, err := exec.Command("su", "-s", "/bin/sh", "munge", "-c", sbin("munged")).CombinedOutput(); err != nil {
		c.t.Fatalf("munged: %v\n%s", err, out)
	}
	c.t.Cleanup(func() {
		if b, err := os.ReadFile("/run/munge/munged.pid"); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				stopProcess(pid)
			}
		}
	})
	for range 50 {
		if mungeWorks() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatal("munged started but `munge -n | unmunge` does not succeed")
}

func mungeWorks() bool {
	cred, err := exec.Command("munge", "-n").Output()
	if err != nil {
		return false
	}
	cmd := exec.Command("unmunge")
	cmd.Stdin = bytes.NewReader(cred)
	return cmd.Run() == nil
}

// freePort returns a TCP port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// writeConfig writes slurm.conf and cgroup.conf for this machine: the node line is what
// `slurmd -C` prints, with memory left for the operating system.
func (c *Cluster) writeConfig() error {
	out, err := exec.Command(sbin("slurmd"), "-C").Output()
	if err != nil {
		return fmt.Errorf("slurmd -C: %v", err)
	}
	node := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	m := regexp.MustCompile(`^NodeName=(\S+) .*RealMemory=([0-9]+)`).FindStringSubmatch(node)
	if m == nil {
		return fmt.Errorf("slurmd -C printed no node line: %q", out)
	}
	host := m[1]
	mem, _ := strconv.Atoi(m[2])
	node = strings.Replace(node, "RealMemory="+m[2], "RealMemory="+strconv.Itoa(max(mem-2048, 1024)), 1)
	ctld, err := freePort()
	if err != nil {
		return err
	}
	slurmd, err := freePort()
	if err != nil {
		return err
	}
	for _, d := range []string{"state", "spool", "log"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o755); err != nil {
			return err
		}
	}
	conf := fmt.Sprintf(`ClusterName=fedpipetest
SlurmctldHost=%[1]s
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=%[4]s/state
SlurmdSpoolDir=%[4]s/spool
SlurmctldPidFile=%[4]s/slurmctld.pid
SlurmdPidFile=%[4]s/slurmd.pid
SlurmctldLogFile=%[4]s/log/slurmctld.log
SlurmdLogFile=%[4]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
KillWait=30
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=%[4]s/jobcomp.log
%[5]s State=UNKNOWN
PartitionName=debug Nodes=%[1]s Default=YES MaxTime=INFINITE State=UP
`, host, ctld, slurmd, c.Dir, node)
	if err := os.WriteFile(c.Conf, []byte(conf), 0o644); err != nil {
		return err
	}
	// slurmd loads a cgroup plugin even with proctrack/linuxproc; 22.05 knows v1 and v2
	// and refuses the one the machine does not mount.
	plugin := "cgroup/v1"
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		plugin = "cgroup/v2"
	}
	return os.WriteFile(filepath.Join(c.Dir, "cgroup.conf"), []byte("CgroupPlugin="+plugin+"\nIgnoreSystemd=yes\n"), 0o644)
}

func (c *Cluster) log(daemon string) string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, "log", daemon+".log"))
	return daemon + " log:\n" + string(b)
}

// stop cancels every job, then stops slurmd and slurmctld.
func (c *Cluster) stop() {
	c.Command("scancel", "--user", "root").Run()
	for _, d := range []string{"slurmd", "slurmctld"} {
		b, err := os.ReadFile(filepath.Join(c.Dir, d+".pid"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			stopProcess(pid)
		}
	}
}

// stopProcess sends SIGTERM, then SIGKILL if pid is still there after 10 s.
func stopProcess(pid int) {
	syscall.Kill(pid, syscall.SIGTERM)
	for range 100 {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// Env is the environment the client commands need (SLURM_CONF), to add to a job's.
func (c *Cluster) Env() []string { return []string{"SLURM_CONF=" + c.Conf} }

// Command is a SLURM client command run against this cluster, with the test's
// environment plus Env.
func (c *Cluster) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), c.Env()...)
	return cmd
}

// Submit runs `sbatch --parsable script` from dir with env (plus Env: a job inherits the
// submitting environment) and returns the job id.
func (c *Cluster) Submit(dir, script string, env []string) string {
	c.t.Helper()
	cmd := exec.Command("sbatch", "--parsable", script)
	cmd.Dir = dir
	cmd.Env = append(env, c.Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("sbatch %s: %v\n%s", script, err, out)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	return id
}

// Wait waits until no task of job id is pending or running.
func (c *Cluster) Wait(id string, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out, err := c.Command("squeue", "-h", "-j", id, "-o", "%i %T").Output()
		if err == nil && strings.TrimSpace(string(out)) == "" {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("job %s still queued or running after %v:\n%s", id, timeout, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// A Task is one array task of a job as the controller knows it.
type Task struct {
	// JobID is the task's own job id (what sacct -c lists), Index its array index.
	JobID, Index string
	// State is the controller's state (RUNNING, COMPLETED, CANCELLED, ...).
	State string
}

// Tasks returns the array tasks of job id by index, from `scontrol show job` (the
// controller keeps finished jobs for MinJobAge, 300 s by default).
func (c *Cluster) Tasks(id string) map[string]Task {
	c.t.Helper()
	out, err := c.Command("scontrol", "-o", "show", "job", id).Output()
	if err != nil {
		c.t.Fatalf("scontrol show job %s: %v", id, err)
	}
	tasks := map[string]Task{}
	field := func(line, key string) string {
		m := regexp.MustCompile(`(?:^| )` + key + `=(\S*)`).FindStringSubmatch(line)
		if m == nil {
			return ""
		}
		return m[1]
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if idx := field(l, "ArrayTaskId"); idx != "" {
			tasks[idx] = Task{JobID: field(l, "JobId"), Index: idx, State: field(l, "JobState")}
		}
	}
	return tasks
}

// Accounting returns the state of every finished job by job id, as `sacct -c` (the
// scheduler's job completion log) reports it, and the lines it printed.
func (c *Cluster) Accounting() (map[string]string, string) {
	c.t.Helper()
	out, err := c.Command("sacct", "-c", "-n", "-P", "-o", "JobID,JobName,State,ExitCode,Elapsed").Output()
	if err != nil {
		c.t.Fatalf("sacct -c: %v", err)
	}
	states := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, "|")
		if len(f) >= 3 {
			states[f[0]] = f[2]
		}
	}
	return states, string(out)
}
