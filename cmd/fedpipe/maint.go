package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
)

// fsck checks every blob, action and ref of a store.
func fsck(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("fsck", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	storeFlag := fs.String("store", "", "store directory (default $FEDPIPE_STORE, else .fedpipe)")
	repair := fs.Bool("repair", false, "delete corrupt blobs, broken actions and dangling refs (the next run recomputes what it needs); exit 0 once the store is clean")
	salvage := fs.Bool("salvage", false, "recover a store that cannot be opened: copy every verifiable blob, action and ref into a fresh store, keep the damaged one beside it, and report what was lost")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe fsck [--store DIR] [--repair | --salvage]\n\nRe-hashes every blob and checks every action's outputs and every ref. Exits 1 if anything is\nmissing or corrupt: such entries are already treated as misses (a run recomputes the results it\nneeds), but they stay until --repair deletes them or gc drops what no manifest uses.\n--salvage rebuilds a store that Badger cannot open at all.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *repair && *salvage {
		fmt.Fprintln(stderr, "fedpipe fsck: --repair and --salvage exclude each other (--salvage also drops what is corrupt)")
		return exitInvalid
	}
	if *salvage {
		return salvageStore(artifacts.DefaultDir(*storeFlag), stdout, stderr)
	}
	s, err := artifacts.Open(artifacts.DefaultDir(*storeFlag), artifacts.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "fedpipe fsck: %v%s\n", err, salvageHint(err))
		return exitFailure
	}
	defer s.Close()
	if *repair {
		return repairStore(s, stdout, stderr)
	}
	r, err := s.Fsck()
	if err != nil {
		fmt.Fprintf(stderr, "fedpipe fsck: %v\n", err)
		return exitFailure
	}
	for _, p := range r.Problems {
		fmt.Fprintln(stdout, p)
	}
	fmt.Fprintf(stdout, "%d blobs (%d corrupt), %d actions (%d broken), %d refs (%d dangling) in %s\n",
		r.Blobs, r.CorruptBlobs, r.Actions, r.BrokenActions, r.Refs, r.DanglingRefs, s.Dir())
	if !r.OK() {
		return exitFailure
	}
	return exitOK
}

// gc removes what no given manifest, and no recent run, references.
func gc(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("gc", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	storeFlag := fs.String("store", "", "store directory (default $FEDPIPE_STORE, else .fedpipe)")
	dataFlag := fs.String("data", "", "directory holding datasets (to compute the manifests' keys)")
	backendFlag := fs.String("backend", "", "GoMLX backend the kept results were computed with")
	recent := fs.Duration("keep-recent", 0, "also keep every result recorded less than this long ago (e.g. 168h)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe gc [MANIFEST...] [--keep-recent DURATION] [--store DIR]\n\nDeletes every cached result that none of the MANIFESTs' stages uses and that is older than\n--keep-recent, then the blobs and chunks nothing references any more, and reports the sizes.\nResume checkpoints are kept. At least one MANIFEST or --keep-recent is required.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() == 0 && *recent <= 0 {
		fmt.Fprintln(stderr, "fedpipe gc: name the manifests whose results to keep, or --keep-recent (refusing to delete everything)")
		return exitInvalid
	}
	var graphs []*pipeline.Graph
	loader := &data.Loader{DataDir: *dataFlag}
	for _, path := range fs.Args() {
		g, _, err := loadGraph(path, loader, *backendFlag)
		if err != nil {
			fmt.Fprintf(stderr, "fedpipe gc: %v\n", err)
			return exitInvalid
		}
		graphs = append(graphs, g)
	}
	s, err := artifacts.Open(artifacts.DefaultDir(*storeFlag), artifacts.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "fedpipe gc: %v\n", err)
		return exitFailure
	}
	defer s.Close()
	before, _ := s.Stats()
	keep, err := pipeline.KeepSet(s, graphs, *recent)
	if err == nil {
		var live map[artifacts.Digest]bool
		if live, err = pipeline.Live(s, keep); err == nil {
			var r artifacts.GCReport
			if r, err = s.GC(keep, live); err == nil {
				after, _ := s.Stats()
				fmt.Fprintf(stdout, "removed %d results, %d blobs, %d chunks (%s); store now %s in %d blobs (was %s)\n",
					r.Actions, r.Blobs, r.Chunks, mib(r.Bytes), mib(after.StoredBytes), after.Blobs, mib(before.StoredBytes))
				return exitOK
			}
		}
	}
	fmt.Fprintf(stderr, "fedpipe gc: %v\n", err)
	return exitFailure
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
