package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every command that declares --set (the input flags) is named where `fedpipe help` lists
// the commands taking it, serve included.
func TestHelpNamesEveryCommandTakingSet(t *testing.T) {
	help := usage()
	i := strings.Index(help, "--set KEY=VALUE (-S)")
	if i < 0 {
		t.Fatalf("help has no --set line:\n%s", help)
	}
	j := strings.LastIndex(help[:i], "\n") // the line before --set's names the commands
	list := help[strings.LastIndex(help[:j], "\n"):i]
	for _, c := range commands {
		if c.groups&inputGroup != 0 && !strings.Contains(list, c.name) {
			t.Errorf("%s takes --set but help's list omits it: %q", c.name, list)
		}
	}
}

// A misspelt flag gets "did you mean" naming the flag it is close to, with exit 2.
func TestMisspeltFlagSuggestsTheFlag(t *testing.T) {
	code, _, errs := fedpipe(t, "status", "x.yaml", "--stroe", "s")
	if code != exitInvalid || !strings.Contains(errs, "unknown flag: --stroe (did you mean --store?)") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if code, _, errs := fedpipe(t, "status", "x.yaml", "--zzzzzzzz"); code != exitInvalid || strings.Contains(errs, "did you mean") {
		t.Errorf("a flag close to none: exit %d, stderr %q", code, errs)
	}
}

// A longer train.rounds continues the cached shorter run: run says so in the phrase status
// and the page use, its closing line counts the resumed stages, and --quiet prints the
// closing line alone, no report table.
func TestRunCountsResumedStagesAndQuietPrintsNoTables(t *testing.T) {
	dir := t.TempDir()
	m, store := writeManifest(t, dir, tinyManifest), filepath.Join(dir, "store")
	if code, _, errs := fedpipe(t, "run", m, "--store", store, "-S", "train.rounds=2"); code != exitOK {
		t.Fatalf("run: %d %s", code, errs)
	}
	code, out, errs := fedpipe(t, "run", m, "--store", store)
	if code != exitOK || !strings.Contains(errs, "train fedavg seed=0 continues the cached 2-round run") {
		t.Fatalf("run: %d, stderr %s", code, errs)
	}
	if !strings.Contains(out, "stages ran (2 resumed), ") {
		t.Errorf("the closing line does not count the 2 resumed train stages:\n%s", out)
	}
	code, out, errs = fedpipe(t, "run", m, "--store", store, "--quiet")
	if code != exitOK || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "stages ran, ") || strings.Contains(out, "|") {
		t.Errorf("run --quiet: %d, stdout %q (want the closing line alone), stderr %s", code, out, errs)
	}
}
