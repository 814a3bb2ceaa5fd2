package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
)

// This file adds a third kind of remote, mem://NAME, whose objects live in this process's
// memory, to show what a kind is: one registration (scheme, addresses, what workers need,
// parsing) and the objects it opens. Nothing outside this file knows it.

// memRemotes holds each memory remote's objects by name, so that every Open of an address
// sees what an earlier one stored, as another machine would.
var memRemotes sync.Map // name → *memObjects

var registerMem sync.Once

// registerMemKind registers the memory kind, once per test binary.
func registerMemKind() {
	registerMem.Do(func() {
		backend.Register(backend.Kind{
			Scheme: "mem",
			Want:   "mem://NAME",
			Parse: func(address string, _ func(string) string) (backend.Location, error) {
				name := strings.TrimPrefix(address, "mem://")
				if name == "" || strings.Contains(name, "/") {
					return nil, fmt.Errorf("%w: %q: want mem://NAME", backend.ErrInvalid, address)
				}
				return memLocation(name), nil
			},
		})
	})
}

// memLocation is a memory remote's name.
type memLocation string

func (l memLocation) String() string  { return "mem://" + string(l) }
func (memLocation) Prefix() string    { return "" }
func (memLocation) Secrets() []string { return nil }

func (l memLocation) Open(context.Context, bool) (backend.Objects, error) {
	o, _ := memRemotes.LoadOrStore(string(l), &memObjects{name: string(l), objs: map[string]memObject{}})
	return o.(*memObjects), nil
}

// memObject is one stored object; tag changes at every write.
type memObject struct {
	data     []byte
	tag      string
	modified time.Time
}

// memObjects keeps a memory remote's objects in a map, each write whole under the lock.
type memObjects struct {
	name   string
	mu     sync.Mutex
	writes int
	objs   map[string]memObject
}

func (m *memObjects) Get(_ context.Context, name string, limit int64) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[name]
	if !ok {
		return nil, false, nil
	}
	if int64(len(o.data)) > limit {
		return nil, false, &backend.UnreadableError{Where: m.Where(name), Why: fmt.Sprintf("holds more than the %d bytes its entry allows", limit)}
	}
	return append([]byte(nil), o.data...), true, nil
}

func (m *memObjects) Put(_ context.Context, name string, data []byte, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.store(name, data)
	return nil
}

// store writes an object; m.mu is held.
func (m *memObjects) store(name string, data []byte) {
	m.writes++
	m.objs[name] = memObject{data: append([]byte(nil), data...), tag: strconv.Itoa(m.writes), modified: time.Now()}
}

func (m *memObjects) Create(_ context.Context, name string, data []byte, _ string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[name]; ok {
		return false, nil
	}
	m.store(name, data)
	return true, nil
}

func (m *memObjects) Exists(_ context.Context, name string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.objs[name]
	return ok, nil
}

func (m *memObjects) List(_ context.Context, prefix string) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for name, o := range m.objs {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			out[rest] = o.tag
		}
	}
	return out, nil
}

func (m *memObjects) Remove(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, name)
	return nil
}

func (m *memObjects) Scan(_ context.Context, prefix string) ([]backend.ObjectInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []backend.ObjectInfo
	for name, o := range m.objs {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			out = append(out, backend.ObjectInfo{Name: rest, Size: int64(len(o.data)), Modified: o.modified})
		}
	}
	return out, nil
}

func (m *memObjects) Where(name string) string { return "mem://" + m.name + "/" + name }

// folders counts the objects in each top folder (cas, ac, …).
func (m *memObjects) folders() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := map[string]int{}
	for name := range m.objs {
		top, _, _ := strings.Cut(name, "/")
		n[top]++
	}
	return n
}

// A kind registered outside artifacts/remote serves fedpipe's push and pull: a store pushed
// to mem://… and pulled from it into an empty store runs the manifest again without
// computing anything, and reports the same; its address, unknown before, is now listed
// among the kinds in the message for a scheme no kind has.
func TestMemoryRemoteKindPushPull(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	ref := runJSON(t, "run", m, "--store", src)
	registerMemKind()
	addr := "mem://" + strings.ReplaceAll(t.Name(), "/", "-")

	var pushed, pulled syncOut
	code, out, errOut := fedpipe(t, "push", m, "--store", src, "--remote", addr, "--json")
	if code != 0 || json.Unmarshal([]byte(out), &pushed) != nil {
		t.Fatalf("push: exit %d %s %s", code, out, errOut)
	}
	if pushed.Remote != addr || pushed.Results != len(ref.Stages) || pushed.Blobs == 0 {
		t.Fatalf("push reported %s; want all %d results sent to %s", out, len(ref.Stages), addr)
	}
	o, _ := memRemotes.Load(strings.TrimPrefix(addr, "mem://"))
	if n := o.(*memObjects).folders(); n["ac"] != len(ref.Stages) || n["cas"] != pushed.Blobs {
		t.Fatalf("the memory remote holds %v; want %d entries under ac/ and %d blobs under cas/", n, len(ref.Stages), pushed.Blobs)
	}

	code, out, errOut = fedpipe(t, "pull", m, "--store", dst, "--remote", addr, "--json")
	if code != 0 || json.Unmarshal([]byte(out), &pulled) != nil {
		t.Fatalf("pull: exit %d %s %s", code, out, errOut)
	}
	if pulled.Results != len(ref.Stages) || pulled.Blobs != pushed.Blobs || pulled.Bytes != pushed.Bytes {
		t.Fatalf("pull reported %s; push sent %+v", out, pushed)
	}
	again := runJSON(t, "run", m, "--store", dst)
	if n := count(again, "", "ran"); n != 0 || again.Report != ref.Report {
		t.Errorf("a store pulled from the memory remote ran %d stages (want 0), or reported differently", n)
	}
	sameOutputs(t, "pulled from mem://", ref, again)

	code, _, errOut = fedpipe(t, "pull", m, "--store", dst, "--remote", "gs://bucket/x")
	if want := "the scheme must be mem, s3 or file (want mem://NAME, s3://BUCKET/PREFIX, file:///DIR or a directory path)"; code != exitInvalid || !strings.Contains(errOut, want) {
		t.Errorf("an unknown scheme: exit %d, %s; want %d and %q", code, errOut, exitInvalid, want)
	}
}
