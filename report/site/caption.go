package site

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/manifest"
)

// display is manifest.DisplayLabel for a row of c, by the method of its first run.
func (c *collected) display(row string) string {
	for _, x := range c.runs {
		if x.row == row {
			return manifest.DisplayLabel(row, x.r.Method)
		}
	}
	return row
}

// shared returns the one value f gives every run, and whether they all agree.
func shared[T comparable](runs []*run, f func(*manifest.Run) T) (T, bool) {
	var zero T
	if len(runs) == 0 {
		return zero, false
	}
	v := f(runs[0].r)
	for _, x := range runs[1:] {
		if f(x.r) != v {
			return zero, false
		}
	}
	return v, true
}

// setting says, for a caption, what the runs drawn have in common: the manifests, the
// dataset, the partition, the clients, the model and the rounds, each only where every run
// agrees (what differs is in the panels' and legend's labels), and the seeds.
func (c *collected) setting(runs []*run) string {
	var parts []string
	if ds, ok := shared(runs, func(r *manifest.Run) string { return r.Dataset.Name }); ok {
		parts = append(parts, manifest.DatasetTitle(ds))
	}
	if s, ok := shared(runs, func(r *manifest.Run) string { return r.Partition.Scheme }); ok {
		p := s + " partition"
		if s == "dirichlet" {
			p = "Dirichlet partition"
			if a, ok := shared(runs, func(r *manifest.Run) float64 { return r.Partition.Alpha }); ok {
				p = "Dir(" + strconv.FormatFloat(a, 'g', -1, 64) + ") partition"
			}
		}
		if n, ok := shared(runs, func(r *manifest.Run) int { return r.Partition.Clients }); ok && n > 0 {
			p += fmt.Sprintf(" over %d clients", n)
		}
		parts = append(parts, p)
	}
	if a, ok := shared(runs, func(r *manifest.Run) string { return r.Model.Arch }); ok {
		parts = append(parts, "model "+a)
	}
	if n, ok := shared(runs, func(r *manifest.Run) int { return r.Train.Rounds }); ok {
		parts = append(parts, fmt.Sprintf("%d rounds", n))
	}
	seeds := map[int64]bool{}
	for _, x := range runs {
		seeds[x.r.Seed] = true
	}
	parts = append(parts, plural(len(seeds), "seed"))
	names := slices.Compact(slices.Clone(c.manifests))
	return "Manifest " + strings.Join(names, ", ") + ": " + strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
