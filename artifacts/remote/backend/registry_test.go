package backend

import (
	"errors"
	"strings"
	"testing"
)

// register replaces the registry, for the rest of the test, with kinds of the given
// schemes; the one named paths takes paths.
func register(t *testing.T, paths string, schemes ...string) {
	registry.mu.Lock()
	saved := registry.kinds
	registry.kinds = nil
	registry.mu.Unlock()
	t.Cleanup(func() {
		registry.mu.Lock()
		registry.kinds = saved
		registry.mu.Unlock()
	})
	for _, s := range schemes {
		Register(Kind{Scheme: s, Want: s + "://X", Paths: s == paths,
			Parse: func(string, func(string) string) (Location, error) { return nil, nil }})
	}
}

// Lookup gives an address with no scheme, or starting with the path kind's scheme and a
// colon, to the kind that takes paths; another to the kind of its scheme; and refuses the
// rest listing the kinds, the path kind last.
func TestLookupBySchemeAndPaths(t *testing.T) {
	register(t, "file", "file", "s3", "mem")
	for addr, want := range map[string]string{
		"s3://b/p": "s3", "mem://x": "mem", "file:///d": "file", "file:rel": "file", "/abs": "file",
		"rel/dir": "file", "s3:bucket": "file", "file:x://y": "file",
	} {
		if k, err := Lookup(addr); err != nil || k.Scheme != want {
			t.Errorf("Lookup(%q) = %q, %v; want %s", addr, k.Scheme, err, want)
		}
	}
	_, err := Lookup("gs://u:secret@b/x")
	want := `invalid remote: "gs://REDACTED@b/x": the scheme must be mem, s3 or file (want mem://X, s3://X, file://X)`
	if !errors.Is(err, ErrInvalid) || err.Error() != want {
		t.Errorf("unknown scheme: %v\nwant %s", err, want)
	}
	if _, err := Lookup("s3:x://y"); err == nil || !strings.Contains(err.Error(), "scheme must be") {
		t.Errorf("Lookup(s3:x://y) = %v, want an unknown scheme", err)
	}
}

// Registering a scheme twice, or a second kind that takes paths, panics at start-up.
func TestRegisterRefusesClashes(t *testing.T) {
	register(t, "file", "file", "s3")
	for _, k := range []Kind{
		{Scheme: "s3", Parse: func(string, func(string) string) (Location, error) { return nil, nil }},
		{Scheme: "nfs", Paths: true, Parse: func(string, func(string) string) (Location, error) { return nil, nil }},
		{Scheme: "gs"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%+v) did not panic", k.Scheme)
				}
			}()
			Register(k)
		}()
	}
}
