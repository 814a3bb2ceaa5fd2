package main

import "github.com/fedpipe/fedpipe/pipeline/memlimit"

// setMemoryLimit sets Go's soft memory limit below what this process may use, its cgroup's
// or SLURM job step's memory (memlimit.Apply).
func setMemoryLimit() { memlimit.Apply() }
