package remote

import (
	"errors"
	"testing"
)

func mapEnv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// Resolve picks the kind by the address's scheme: s3:// is an S3 remote that workers reach
// by address, a file URL or a plain path a directory they must share; any other scheme is
// refused with the message that lists the kinds.
func TestResolvePicksTheKindByScheme(t *testing.T) {
	env := mapEnv(map[string]string{"HOME": t.TempDir()})
	c, err := Resolve("s3://bkt/team/", env)
	if err != nil || c.String() != "s3://bkt/team" || c.Workers().SharedPath || c.loc.Prefix() != "team" {
		t.Fatalf("Resolve(s3://bkt/team/) = %v (prefix %q), %v; want an S3 remote workers need no path for", c, c.loc.Prefix(), err)
	}
	for _, addr := range []string{"/srv/x", "file:///srv/x", "s3:bucket"} {
		if c, err := Resolve(addr, env); err != nil || !c.Workers().SharedPath {
			t.Errorf("Resolve(%q) = %v, %v; want a directory remote", addr, c, err)
		}
	}
	_, err = Resolve("gs://user:pw@bucket/x", env)
	const want = `invalid remote: "gs://REDACTED@bucket/x": the scheme must be s3 or file (want s3://BUCKET/PREFIX, file:///DIR or a directory path)`
	if !errors.Is(err, ErrInvalid) || err.Error() != want {
		t.Errorf("unknown scheme: %v\nwant %s", err, want)
	}
}
