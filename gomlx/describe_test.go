package gomlx

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/gomlx/gemm"
)

// A CPU backend's description: its id, whether XLA is compiled in and fpfast's kernels; no
// plugin, no environment.
func TestDescribeCPU(t *testing.T) {
	d, err := Describe(CPU, "the-id")
	if err != nil || d.Plugin != nil || d.Env != nil {
		t.Fatalf("Describe(%s) = %+v, %v", CPU, d, err)
	}
	f := d.Fields()
	if f["backend"] != CPU || f["id"] != "the-id" || f["xla_compiled"] != XLACompiled || f["plugin"] != nil {
		t.Errorf("fields %v", f)
	}
	var b bytes.Buffer
	d.WriteText(&b)
	lines := strings.Split(b.String(), "\n")
	if len(lines) != 5 || lines[0] != "backend:  "+CPU || lines[1] != "id:       the-id" ||
		!strings.HasPrefix(lines[2], "xla:      ") || !strings.HasPrefix(lines[3], "gemm:     "+gemm.KernelISA()+" kernels") {
		t.Errorf("text:\n%s", b.String())
	}
}

// An xla configuration whose plugin is not found is not described.
func TestDescribeXLAMissing(t *testing.T) {
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir())
	if d, err := Describe(XLA+":"+t.TempDir()+"/missing.so", "x"); err == nil {
		t.Errorf("described %+v", d)
	}
}
