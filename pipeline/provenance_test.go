package pipeline

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
)

// TestProvenanceMeta: provenance survives the trip through an action's meta (strings), its
// wall time read as the total over its segments;
// a result recorded before provenance (only "seconds" and "created") reads as those two
// fields; one with no meta reads as none.
func TestProvenanceMeta(t *testing.T) {
	p := Provenance{Version: "0.18.0-dev", Commit: "abc-modified", Backend: "gomlx@v/fpfast@1/fpgraph-4/float32",
		CPU: "Some CPU @ 2.00GHz", Threads: 2, Seconds: 1.5, PeakRSS: 123 << 20, Date: "2025-01-02T03:04:05Z",
		Segments: []Segment{{From: 1, To: 290, Provenance: Provenance{CPU: "Other CPU", Threads: 16, Seconds: 750, Commit: "abc"}}, {From: 291, To: 400, Provenance: Provenance{CPU: "Some CPU @ 2.00GHz", Threads: 2, Seconds: 1.5}}}}
	m := map[string]string{"kind": "train"}
	p.putMeta(m)
	if m["peak_rss_bytes"] != "128974848" || m["seconds"] != "1.500" || m["threads"] != "2" {
		t.Errorf("meta %v", m)
	}
	got, ok := ProvenanceOf(artifacts.Action{Meta: m})
	want := p
	want.Seconds = 751.5 // read back as the total over its segments
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("round trip: %+v (%v), want %+v", got, ok, want)
	}
	old, ok := ProvenanceOf(artifacts.Action{Meta: map[string]string{"seconds": "2.250", "created": "2024-05-06T07:08:09Z", "name": "x"}})
	if !ok || !reflect.DeepEqual(old, Provenance{Seconds: 2.25, Date: "2024-05-06T07:08:09Z"}) {
		t.Errorf("older meta: %+v (%v)", old, ok)
	}
	if _, ok := ProvenanceOf(artifacts.Action{}); ok {
		t.Error("an action without meta has provenance")
	}
	if PeakRSS() <= 0 || CPUModel() == "" {
		t.Errorf("peak RSS %d, CPU %q", PeakRSS(), CPUModel())
	}
}
