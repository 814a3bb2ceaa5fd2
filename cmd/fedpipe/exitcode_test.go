package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/verify/kept"
)

// Each kind of failure has its code: invalid input 2, the environment 4 (however deeply
// wrapped), anything else 1.
func TestExitCodeOf(t *testing.T) {
	for err, want := range map[error]int{
		&manifest.InputError{File: "m.yaml", Msg: "bad"}:   exitInvalid,
		fmt.Errorf("checkpoint: %w", artifacts.ErrNoSpace): exitEnvironment,
		fmt.Errorf("write: %w", syscall.ENOSPC):            exitEnvironment,
		fmt.Errorf("open: %w", syscall.EROFS):              exitEnvironment,
		fmt.Errorf("open: %w", syscall.EACCES):             exitEnvironment,
		fmt.Errorf("fsck: %w", artifacts.ErrDamaged):       exitEnvironment,
		fmt.Errorf("reproduced: %w", kept.ErrDamaged):      exitEnvironment,
		fmt.Errorf("store: %w", artifacts.ErrLocked):       exitFailure,
		errors.New("something else"):                       exitFailure,
	} {
		if got := exitCodeOf(err); got != want {
			t.Errorf("exitCodeOf(%v) = %d, want %d", err, got, want)
		}
	}
}

// fsck and gc say at once whom they wait for and give up after --lock-timeout.
func TestFsckAndGCNameTheHolderAndTakeALockTimeout(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	holder, err := artifacts.Open(store, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	for _, args := range [][]string{{"fsck"}, {"gc", "--keep-recent", "1h"}} {
		start := time.Now()
		code, _, errOut := fedpipe(t, append(args, "--store", store, "--lock-timeout", "1s")...)
		if d := time.Since(start); code != exitFailure || d > 10*time.Second || !strings.Contains(errOut, "waiting for pid") ||
			!strings.Contains(errOut, "in use by another fedpipe process") {
			t.Errorf("%v on a held store: exit %d after %v\n%s", args, code, d, errOut)
		}
	}
}
