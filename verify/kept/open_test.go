package kept

import (
	"bytes"
	"context"
	"os"
	"testing"
)

func TestOpenAndClose(t *testing.T) {
	dir := t.TempDir()
	k, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if k.Dir != dir || k.Store == nil || k.Remote == nil {
		t.Fatalf("Open = %+v", k)
	}
	tmp := k.tmp
	k.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("throwaway store %s left after Close: %v", tmp, err)
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	WriteText(&b, []Manifest{{File: "m/a.yaml", Skipped: NoExpect}, {File: "m/b.yaml"}})
	want := "m/a.yaml: not checked (no expect entries)\n\nm/b.yaml\n  method | cell | metric | expected | measured (mean of the kept seeds ± std over them) | diff | verdict\n\n"
	if b.String() != want {
		t.Errorf("WriteText:\n%q\nwant\n%q", b.String(), want)
	}
}
