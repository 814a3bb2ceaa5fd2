package kept

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/verify"
)

// Results is an opened kept-results directory: the directory remote, read-only, and a
// throwaway store its results are fetched into to be verified. Create it with Open; Close
// closes the store and removes it.
type Results struct {
	// Dir is the directory's absolute path.
	Dir    string
	Remote *remote.Remote
	Store  *artifacts.Store
	tmp    string
}

// Open opens the kept-results directory dir (absolute) read-only, so that a reviewer's
// read-only checkout verifies, with no notices: whatever the remote would log as a miss (a
// damaged object) fails the check instead, with the same words (Fetch).
func Open(ctx context.Context, dir string) (*Results, error) {
	r, err := remote.Open(ctx, "file://"+dir, remote.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "fedpipe-reproduced-")
	if err != nil {
		return nil, err
	}
	store, err := artifacts.Open(filepath.Join(tmp, "store"), artifacts.Options{})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &Results{Dir: dir, Remote: r, Store: store, tmp: tmp}, nil
}

// Close closes the throwaway store and removes it.
func (k *Results) Close() {
	k.Store.Close()
	os.RemoveAll(k.tmp)
}

// CheckAll checks each manifest of paths in turn (Check) and returns their verdicts and
// the graphs whose kept results were read.
func (k *Results) CheckAll(ctx context.Context, paths []string, o Options) ([]Manifest, []*pipeline.Graph, error) {
	var ms []Manifest
	var graphs []*pipeline.Graph
	for _, path := range paths {
		km, gs, err := Check(ctx, path, o, k.Dir, k.Remote, k.Store)
		if err != nil {
			return nil, nil, err
		}
		ms = append(ms, km)
		graphs = append(graphs, gs...)
	}
	return ms, graphs, nil
}

// WriteText writes the manifests' verdicts as `fedpipe reproduced` prints them: per
// manifest checked, its cells under a header row; per manifest not, why; then an empty
// line.
func WriteText(w io.Writer, ms []Manifest) {
	for _, m := range ms {
		if m.Skipped != "" {
			fmt.Fprintf(w, "%s: not checked (%s)\n", m.File, m.Skipped)
			continue
		}
		fmt.Fprintf(w, "\n%s\n", m.File)
		fmt.Fprintf(w, "  %s\n", strings.Join(Header, " | "))
		for _, c := range m.Cells {
			row := c.Row()
			row[6] = Verdict(c, false)
			fmt.Fprintf(w, "  %s\n", strings.Join(row, " | "))
		}
		WriteCurvesText(w, m.Curves)
		for _, v := range m.Claims {
			fmt.Fprintf(w, "  claim %s\n", v.Line())
		}
	}
	fmt.Fprintln(w)
}

// WriteHeadline writes what the summary line rests on: the claims' count and one line per
// paper (its kept cells of those computable here, or why none can be).
func WriteHeadline(w io.Writer, ms []Manifest) {
	fmt.Fprintln(w, verify.TallyClaims(ClaimsOf(ms)).Line())
	for _, l := range PaperLines(ms) {
		fmt.Fprintln(w, l)
	}
}
