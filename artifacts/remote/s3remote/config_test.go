package s3remote

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct{ in, bucket, prefix, err string }{
		{"s3://fedpipe-cache", "fedpipe-cache", "", ""},
		{"s3://fedpipe-cache/", "fedpipe-cache", "", ""},
		{"s3://lab.results/team/sweep-1/", "lab.results", "team/sweep-1", ""},
		{"https://bucket/x", "", "", "scheme must be s3"},
		{"s3://AKID:secret@bucket/x", "", "", "credentials do not belong"},
		{"s3://bucket/x?region=eu", "", "", "no query"},
		{"s3://Bucket/x", "", "", "bucket name"},
		{"s3://ab/x", "", "", "bucket name"},
		{"s3://bucket/a//b", "", "", "empty path segment"},
		{"bucket/x", "", "", "scheme must be s3"},
	} {
		b, p, err := ParseURL(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, backend.ErrInvalid) {
				t.Errorf("ParseURL(%q) error = %v, want one containing %q", c.in, err, c.err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") && strings.Contains(c.in, "secret") {
				t.Errorf("ParseURL(%q) quotes the secret: %v", c.in, err)
			}
			continue
		}
		if err != nil || b != c.bucket || p != c.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q", c.in, b, p, err, c.bucket, c.prefix)
		}
	}
}

func mapEnv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolveFromEnvironment(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir(), "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
		"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:7070", "AWS_DEFAULT_REGION": "eu-west-1",
		"AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "secretenv"}
	c, err := Parse("s3://bkt/p", mapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "127.0.0.1:7070" || c.Secure || c.Region != "eu-west-1" || !c.PathStyle {
		t.Fatalf("resolved %+v: want the S3-specific endpoint, no TLS, AWS_DEFAULT_REGION, path-style", c)
	}
	if got := c.Secrets(); len(got) != 2 || got[0] != "AKIDENV" || got[1] != "secretenv" {
		t.Fatalf("secrets = %q", got)
	}
	if s := c.String(); s != "s3://bkt/p" {
		t.Fatalf("String = %q", s)
	}
	env["AWS_REGION"] = "ap-south-1"
	if c, _ = Parse("s3://bkt", mapEnv(env)); c.Region != "ap-south-1" || c.String() != "s3://bkt" {
		t.Fatalf("AWS_REGION not preferred: %+v", c)
	}

	// Amazon itself: TLS, virtual-hosted addressing unless asked for path-style.
	c, err = Parse("s3://bkt/p", mapEnv(map[string]string{"HOME": t.TempDir()}))
	if err != nil || c.Endpoint != "s3.amazonaws.com" || !c.Secure || c.PathStyle || c.Region != "us-east-1" {
		t.Fatalf("default endpoint: %+v %v", c, err)
	}
	c, _ = Parse("s3://bkt/p", mapEnv(map[string]string{"HOME": t.TempDir(), "FEDPIPE_S3_PATH_STYLE": "true"}))
	if !c.PathStyle {
		t.Fatal("FEDPIPE_S3_PATH_STYLE=true ignored")
	}

	for _, bad := range []map[string]string{
		{"AWS_ENDPOINT_URL": "ftp://host"},
		{"AWS_ENDPOINT_URL": "http://user:pw@host"},
		{"AWS_ACCESS_KEY_ID": "only-the-id"},
	} {
		bad["HOME"] = t.TempDir()
		_, err := Parse("s3://bkt/p", mapEnv(bad))
		if !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("Resolve with %v: %v, want backend.ErrInvalid", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("endpoint password quoted: %v", err)
		}
	}
}

// Region, endpoint and credentials come from the AWS config and credentials files of the
// selected profile when the environment does not set them.
func TestResolveFromAWSFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	creds := filepath.Join(dir, "credentials")
	os.WriteFile(cfg, []byte("[default]\nregion = us-west-2\n\n[profile lab]\nregion = eu-central-1\nendpoint_url = https://s3.lab.example:8443\n"), 0o600)
	os.WriteFile(creds, []byte("[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = secretdefault\n\n[lab]\naws_access_key_id = AKIDLAB\naws_secret_access_key = secretlab\n"), 0o600)
	t.Setenv("AWS_CONFIG_FILE", cfg)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	t.Setenv("AWS_PROFILE", "lab")
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
		"AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"} {
		t.Setenv(k, "")
	}
	c, err := Parse("s3://bkt/p", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Region != "eu-central-1" || c.Endpoint != "s3.lab.example:8443" || !c.Secure || !c.PathStyle {
		t.Fatalf("profile lab: %+v", c)
	}
	if got := c.Secrets(); len(got) != 2 || got[0] != "AKIDLAB" {
		t.Fatalf("profile lab credentials = %q", got)
	}
	t.Setenv("AWS_PROFILE", "")
	c, err = Parse("s3://bkt/p", os.Getenv)
	if err != nil || c.Region != "us-west-2" || c.Endpoint != "s3.amazonaws.com" {
		t.Fatalf("default profile: %+v %v", c, err)
	}
	if got := c.Secrets(); len(got) != 2 || got[0] != "AKIDDEFAULT" {
		t.Fatalf("default profile credentials = %q", got)
	}
}
