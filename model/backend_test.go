package model

import (
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/gomlx"
	"github.com/fedpipe/fedpipe/gomlx/cpubackend"
	"github.com/fedpipe/fedpipe/gomlx/fastcpu"
)

// TestBackendID pins the ids of this package's graphs on fpfast and fpcpu: they are part of
// every train stage's key, so only a deliberate change of CodeVersion (or of a backend's own
// version) may change them, and the XLA graphs' revisions are no part of them.
func TestBackendID(t *testing.T) {
	id, oracle := BackendID(CPUBackend), BackendID(OracleBackend)
	if want := "gomlx@" + gomlx.GoMLXVersion() + "/fpfast@" + fastcpu.Version() + "/fpgraph-4/float32"; id != want {
		t.Errorf("fpfast ID %q, want %q", id, want)
	}
	if want := "gomlx@" + gomlx.GoMLXVersion() + "/fpcpu@" + cpubackend.CodeVersion + "/fpgraph-4/float32"; oracle != want {
		t.Errorf("fpcpu ID %q, want %q", oracle, want)
	}
	if !strings.HasPrefix(id, "gomlx@v") || !strings.Contains(id, "gemm-") {
		t.Errorf("fpfast ID %q names no GoMLX release or GEMM version", id)
	}
	for _, xlaOnly := range []string{LockstepCodeVersion, XLAGraphVersion} {
		if strings.Contains(id, xlaOnly) || strings.Contains(oracle, xlaOnly) {
			t.Errorf("fpfast ID %q or fpcpu ID %q carries the XLA revision %q", id, oracle, xlaOnly)
		}
	}
	if BackendID("xla:cuda") == id || !strings.Contains(BackendID("xla:cuda"), "+"+LockstepCodeVersion+"+"+XLAGraphVersion+"/") {
		t.Errorf("xla ID %q: want the lockstep and XLA graph revisions", BackendID("xla:cuda"))
	}
}

// TestBackendHereAndCurrent: this package's ids of fpfast and fpcpu are current and
// computed here; an id of older graph code is neither.
func TestBackendHereAndCurrent(t *testing.T) {
	for _, b := range []string{CPUBackend, OracleBackend} {
		if c, why := BackendHere(BackendID(b)); c != b || why != "" {
			t.Errorf("BackendHere(%s) = %q, %q", BackendID(b), c, why)
		}
		if got := CurrentBackendID(BackendID(b)); got != BackendID(b) {
			t.Errorf("CurrentBackendID(%q) = %q", BackendID(b), got)
		}
		old := strings.Replace(BackendID(b), CodeVersion, "fpgraph-1", 1)
		if got := CurrentBackendID(old); got != BackendID(b) {
			t.Errorf("CurrentBackendID(%q) = %q, want %q", old, got, BackendID(b))
		}
		if c, why := BackendHere(old); c != "" || !strings.Contains(why, "lacks") {
			t.Errorf("BackendHere(%q) = %q, %q", old, c, why)
		}
	}
}

// NewModel refuses a backend that does not resolve, and builds on one that does.
func TestNewModelBackend(t *testing.T) {
	spec := ModelSpec{Arch: ArchLogReg, InputShape: []int{2}, NumClasses: 2}
	for _, b := range []string{"tpu", "go", "fpfast:bogus=2"} {
		if _, err := NewModel(b, spec); err == nil {
			t.Errorf("NewModel accepted backend %q", b)
		}
	}
	for _, b := range []string{"", CPUBackend, OracleBackend + ":workers=2"} {
		if _, err := NewModel(b, spec); err != nil {
			t.Errorf("NewModel(%q): %v", b, err)
		}
	}
}
