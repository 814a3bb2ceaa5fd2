package launch

import (
	"strings"
	"testing"
	"time"
)

func TestShellJoinQuotesWhatTheShellWouldExpand(t *testing.T) {
	got := ShellJoin([]string{"m.yaml", "-S", "seeds=[1,2]", "-S", "train.lr=0.1", "--only", "it's"})
	want := `m.yaml -S 'seeds=[1,2]' -S train.lr=0.1 --only 'it'\''s'`
	if got != want {
		t.Errorf("ShellJoin = %s, want %s", got, want)
	}
}

func TestDNSLabelIsAShortLowerCaseLabel(t *testing.T) {
	for in, want := range map[string]string{
		"FedOBP Table 6":        "fedpipe-fedobp-table-6",
		"__":                    "fedpipe-sweep",
		strings.Repeat("a", 50): "fedpipe-" + strings.Repeat("a", 40),
	} {
		if got := DNSLabel(in); got != want {
			t.Errorf("DNSLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWorkerArgsSplitStaticallyOrByLeases(t *testing.T) {
	f := Config{Remote: "s3://b/p", Workers: 4, LeaseTTL: time.Minute, DataDir: "/data"}
	got := strings.Join(workerArgs(f, "m.yaml", "/s", "3"), " ")
	if want := "run m.yaml --remote s3://b/p --store /s --lease-ttl 1m0s --worker --data /data"; got != want {
		t.Errorf("workerArgs = %s, want %s", got, want)
	}
	f.Static = true
	if got := strings.Join(workerArgs(f, "m.yaml", "/s", "3"), " "); !strings.Contains(got, "--shard 3/4") {
		t.Errorf("static workerArgs = %s, want --shard 3/4", got)
	}
}

func TestSlurmMemUsesSbatchUnits(t *testing.T) {
	for in, want := range map[string]string{"4Gi": "4G", "512Mi": "512M", "2000": "2000", "8k": "8K"} {
		if got := slurmMem(in); got != want {
			t.Errorf("slurmMem(%q) = %q, want %q", in, got, want)
		}
	}
}
