package gomlx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/gomlx/cpubackend"
	"github.com/fedpipe/fedpipe/gomlx/fastcpu"
	"github.com/fedpipe/fedpipe/gomlx/xlaenv"
)

// testVersions stand for package model's graph versions, which ids carry.
var testVersions = GraphVersions{Graph: "graph-7", Lockstep: "lockstep-5", XLAGraph: "xlagraph-2"}

func testID(config string) string { return ID(config, testVersions) }

func currentID(recorded string) string { return CurrentID(recorded, testVersions) }

func here(id string) (string, string) { return Here(id, testVersions) }

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	plugin := filepath.Join(dir, "pjrt_c_api_cuda_plugin.so")
	if err := os.WriteFile(plugin, []byte("not really a plugin"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope.so")
	// Search only $PJRT_PLUGIN_LIBRARY_PATH and an empty home, not this machine's Python.
	defer func(f *xlaenv.Finder) { xlaFinder = f }(xlaFinder)
	xlaFinder = &xlaenv.Finder{SitePackages: func() []string { return nil }, Home: t.TempDir()}
	type testCase struct {
		name, flag, env, pluginPath string
		want                        string // Resolved config, if no error is expected.
		wantErr                     []string
	}
	cases := []testCase{
		{name: "default", want: CPU},
		{name: "env", env: "fpcpu:workers=3", want: "fpcpu:workers=3"},
		{name: "flag wins over env", flag: "fpcpu", env: "xla:cuda", want: "fpcpu"},
		{name: "stock go backend refused", env: "go", wantErr: []string{"deadlock", CPU}},
		{name: "oracle by env", env: "fpcpu", want: "fpcpu"},
		{name: "fast by flag", flag: "fpfast:workers=2", env: "fpcpu", want: "fpfast:workers=2"},
		{name: "fast threads", flag: "fpfast:threads=1", want: "fpfast:threads=1"},
		{name: "bad fast option", flag: "fpfast:bogus=2", wantErr: []string{"unknown option", "fpfast"}},
		{name: "bad fast threads", flag: "fpfast:threads=0", wantErr: []string{"threads", "fpfast"}},
		{name: "cpu options", flag: "fpcpu:workers=2", want: "fpcpu:workers=2"},
		{name: "bad cpu option", flag: "fpcpu:threads=2", wantErr: []string{"unknown option", "flag"}},
		{name: "unknown", env: "tpu", wantErr: []string{`"tpu"`, "$GOMLX_BACKEND", "fpcpu"}},
		{name: "xla plugin not found", flag: "xla:cuda", pluginPath: t.TempDir(),
			wantErr: []string{"not found", "pjrt_c_api_cuda_plugin.so", "PJRT_PLUGIN_LIBRARY_PATH"}},
		{name: "xla no search path", flag: "xla:cpu",
			wantErr: []string{"not found", "$PJRT_PLUGIN_LIBRARY_PATH (unset)", "pjrt_c_api_cpu_plugin.so", "never downloaded"}},
		{name: "xla unknown option", flag: "xla:cuda,fast", pluginPath: dir, wantErr: []string{`unknown option "fast"`, "tf32"}},
		{name: "xla absolute path missing", env: "xla:" + missing, wantErr: []string{"not found", missing}},
	}
	if XLACompiled {
		cases = append(cases,
			testCase{name: "xla plugin found", flag: "xla:cuda", pluginPath: dir, want: "xla:" + plugin},
			testCase{name: "xla absolute path found", flag: "xla:" + plugin + ",tf32", want: "xla:" + plugin + ",tf32"})
	} else {
		cases = append(cases,
			testCase{name: "xla plugin found", flag: "xla:cuda", pluginPath: dir, wantErr: []string{plugin, "built without the XLA backend", "make build-xla"}},
			testCase{name: "xla absolute path found", flag: "xla:" + plugin, wantErr: []string{plugin, "built without the XLA backend"}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOMLX_BACKEND", tc.env)
			t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", tc.pluginPath)
			got, err := Resolve(tc.flag)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("got %q, want an error", got)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				if _, err := Get(tc.flag); err == nil {
					t.Errorf("Get accepted backend %q", tc.flag)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got (%q, %v), want %q", got, err, tc.want)
			}
			if strings.HasPrefix(tc.want, "xla:") {
				// The file is no plugin: loading it fails, naming it.
				if _, err := Get(tc.flag); err == nil || !strings.Contains(err.Error(), plugin) {
					t.Errorf("Get(%q) with a fake plugin: %v", tc.flag, err)
				}
				return
			}
			if _, err := Get(tc.flag); err != nil {
				t.Errorf("Get(%q): %v", tc.flag, err)
			}
		})
	}
}

func TestID(t *testing.T) {
	id := testID(CPU)
	for _, want := range []string{"gomlx@v", "fpfast@", "gemm-", testVersions.Graph, "float32"} {
		if !strings.Contains(id, want) {
			t.Errorf("ID %q lacks %q", id, want)
		}
	}
	if testID("fpfast:workers=3") != id || testID("") != id {
		t.Errorf("worker count or default resolution changed the ID: %q, %q vs %q", testID("fpfast:workers=3"), testID(""), id)
	}
	oracle := testID(Oracle)
	if !strings.Contains(oracle, "fpcpu@") || oracle == id || testID("fpcpu:workers=3") != oracle {
		t.Errorf("oracle ID %q: want an fpcpu ID independent of workers and different from %q", oracle, id)
	}
	if testID("xla:cuda") == id {
		t.Errorf("different backends share the ID %q", id)
	}
	// fpfast's and fpcpu's ids carry none of the XLA graphs' revisions: XLA's graph form
	// changes without changing their keys.
	want := "gomlx@" + GoMLXVersion() + "/fpfast@" + fastcpu.Version() + "/" + testVersions.Graph + "/float32"
	if id != want {
		t.Errorf("fpfast ID %q, want %q", id, want)
	}
	if want := "gomlx@" + GoMLXVersion() + "/fpcpu@" + cpubackend.CodeVersion + "/" + testVersions.Graph + "/float32"; oracle != want {
		t.Errorf("fpcpu ID %q, want %q", oracle, want)
	}
	for _, xlaOnly := range []string{testVersions.Lockstep, testVersions.XLAGraph} {
		if strings.Contains(id, xlaOnly) || strings.Contains(oracle, xlaOnly) {
			t.Errorf("fpfast ID %q or fpcpu ID %q carries the XLA revision %q", id, oracle, xlaOnly)
		}
	}
}

// TestXLAID checks an xla backend's identity names the plugin by contents, and
// TensorFloat-32 apart.
func TestXLAID(t *testing.T) {
	dir := t.TempDir()
	plugin := filepath.Join(dir, "pjrt_c_api_cuda_plugin.so")
	if err := os.WriteFile(plugin, []byte("plugin one"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other", "pjrt_c_api_cuda_plugin.so")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("plugin two"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := testID("xla:" + plugin)
	for _, want := range []string{"/xla-cuda@", testVersions.Graph, "+" + testVersions.Lockstep + "+" + testVersions.XLAGraph + "/", "gomlx@"} {
		if !strings.Contains(id, want) {
			t.Errorf("ID %q lacks %q", id, want)
		}
	}
	if tf := testID("xla:" + plugin + ",tf32"); tf == id || !strings.Contains(tf, ",tf32") {
		t.Errorf("tf32 ID %q vs %q", tf, id)
	}
	if o := testID("xla:" + other); o == id {
		t.Errorf("two plugin builds share the ID %q", id)
	}
	if m := testID("xla:" + filepath.Join(dir, "missing.so")); !strings.Contains(m, "xla-unavailable") || m == id {
		t.Errorf("missing plugin ID %q", m)
	}
}

func TestSingleThreaded(t *testing.T) {
	for in, want := range map[string]string{
		"":                           "fpfast:threads=1",
		"fpfast":                     "fpfast:threads=1",
		"fpfast:workers=4":           "fpfast:workers=4,threads=1",
		"fpfast:threads=3,workers=2": "fpfast:workers=2,threads=1",
	} {
		got, ok := SingleThreaded(in)
		if !ok || got != want {
			t.Errorf("SingleThreaded(%q) = %q, %v; want %q", in, got, ok, want)
		}
		if _, err := Resolve(got); err != nil {
			t.Errorf("SingleThreaded(%q) = %q, which does not resolve: %v", in, got, err)
		}
	}
	if got, ok := SingleThreaded(Oracle); ok {
		t.Errorf("SingleThreaded(%q) = %q, true; fpcpu has no single-threaded mode", Oracle, got)
	}
}

// CurrentID keeps the backend that made a result (its family, an XLA plugin's
// identity and TF32 setting) and takes this code's versions: a result of an older lockstep
// or model code gets a new id (so its key changes: stale), a current one its own id.
func TestCurrentID(t *testing.T) {
	if got := currentID(testID(Oracle)); got != testID(Oracle) {
		t.Errorf("current fpcpu id %q → %q", testID(Oracle), got)
	}
	old := strings.Replace(testID(Oracle), testVersions.Graph, "graph-1", 1)
	if got := currentID(old); got != testID(Oracle) {
		t.Errorf("fpcpu of older model code %q → %q, want %q", old, got, testID(Oracle))
	}
	if got := currentID(testID(CPU)); got != testID(CPU) {
		t.Errorf("current fpfast id → %q", got)
	}
	plugin := "xla-cuda@jax-cuda13-pjrt-0.11.2-43d3efd6fd43d8a5"
	// ID's form for XLA: the plugin, then the lockstep and XLA-graph versions.
	cur := "gomlx@" + GoMLXVersion() + "/" + plugin + "+" + testVersions.Lockstep + "+" + testVersions.XLAGraph + "/" + testVersions.Graph + "/float32"
	for _, rec := range []string{cur,
		"gomlx@" + GoMLXVersion() + "/" + plugin + "+lockstep-1+" + testVersions.XLAGraph + "/" + testVersions.Graph + "/float32",
		"gomlx@" + GoMLXVersion() + "/" + plugin + "+" + testVersions.Lockstep + "+xlagraph-1/" + testVersions.Graph + "/float32",
		// made before the XLA graph had a version of its own
		"gomlx@" + GoMLXVersion() + "/" + plugin + "+" + testVersions.Lockstep + "/" + testVersions.Graph + "/float32",
		"gomlx@v0.1.0/" + plugin + "+" + testVersions.Lockstep + "/fpgraph-1/float32"} {
		if got := currentID(rec); got != cur {
			t.Errorf("currentID(%q) = %q, want %q", rec, got, cur)
		}
	}
	tf := strings.Replace(cur, plugin, plugin+",tf32", 1)
	if got := currentID(tf); got != tf {
		t.Errorf("TF32 lost: %q → %q", tf, got)
	}
	if got := currentID("cpu-a"); got != "cpu-a" {
		t.Errorf("an id of no known form changed: %q", got)
	}
}

// Here finds the configuration that computes a backend's results bit for bit here
// (fpfast and fpcpu always), and says why not for a backend this machine lacks.
func TestHere(t *testing.T) {
	for _, b := range []string{CPU, Oracle} {
		if c, why := here(testID(b)); c != b || why != "" {
			t.Errorf("here(%s) = %q, %q", testID(b), c, why)
		}
	}
	old := strings.Replace(testID(Oracle), testVersions.Graph, "graph-1", 1)
	if c, why := here(old); c != "" || !strings.Contains(why, "lacks") {
		t.Errorf("older fpcpu code: %q, %q", c, why)
	}
	xla := "gomlx@v0.26.0/xla-cuda@jax-cuda13-pjrt-0.11.2-00000000deadbeef+" + testVersions.Lockstep + "/" + testVersions.Graph + "/float32"
	if c, why := here(xla); c != "" || !strings.Contains(why, "made on xla-cuda") || !strings.Contains(why, "lacks") {
		t.Errorf("here(an XLA plugin not here) = %q, %q", c, why)
	}
}
