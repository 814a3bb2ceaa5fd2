// Package s3remote is the S3 kind of remote: its objects are in a bucket of an
// S3-compatible object store (Amazon S3, MinIO, Ceph, versitygw), under a prefix. Its
// addresses are s3://BUCKET/PREFIX; the endpoint, region and credentials come from the
// standard AWS environment variables and files.
package s3remote

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7/pkg/credentials"
	"gopkg.in/ini.v1"

	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
)

func init() {
	backend.Register(backend.Kind{
		Scheme: "s3",
		Want:   "s3://BUCKET/PREFIX",
		Parse: func(address string, env func(string) string) (backend.Location, error) {
			loc, err := Parse(address, env)
			if err != nil {
				return nil, err // not a nil *Location in a non-nil interface
			}
			return loc, nil
		},
	})
}

// Location says where an S3 remote lives and how to reach it. Parse fills it from a URL
// and the standard AWS environment variables and files; it holds the credentials, which
// String never shows.
type Location struct {
	// Bucket comes from the URL s3://Bucket/prefix.
	Bucket string
	// Endpoint is host[:port] of the S3 API; Secure says whether it is reached over TLS.
	Endpoint string
	Secure   bool
	// Region is the bucket's region ("us-east-1" when nothing sets it).
	Region string
	// PathStyle addresses the bucket as endpoint/bucket/key rather than as
	// bucket.endpoint/key, as self-hosted servers (versitygw, MinIO, Ceph) need.
	PathStyle bool

	prefix string
	creds  *credentials.Credentials
}

// String is the remote's URL: no endpoint credentials or keys, fit for logs and --json.
func (c *Location) String() string {
	if c.prefix == "" {
		return "s3://" + c.Bucket
	}
	return "s3://" + c.Bucket + "/" + c.prefix
}

// Prefix is the prefix of the URL s3://bucket/Prefix, without leading or trailing slash;
// it may be empty.
func (c *Location) Prefix() string { return c.prefix }

// ParseURL splits s3://bucket/prefix into its bucket and prefix (without surrounding
// slashes). Query parameters are not accepted, nor user information: credentials come from
// the environment, never from the address.
func ParseURL(s string) (bucket, prefix string, err error) {
	bad := func(why string) (string, string, error) {
		return "", "", fmt.Errorf("%w: %q: %s (want s3://BUCKET/PREFIX)", backend.ErrInvalid, backend.RedactURL(s), why)
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad("not a URL")
	}
	if u.Scheme != "s3" {
		return bad("the scheme must be s3")
	}
	if u.User != nil {
		return bad("credentials do not belong in the address; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return bad("no query or fragment is accepted")
	}
	bucket = u.Host
	if len(bucket) < 3 || len(bucket) > 63 || strings.Trim(bucket, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" {
		return bad("a bucket name is 3 to 63 lower-case letters, digits, dots and hyphens")
	}
	prefix = strings.Trim(u.Path, "/")
	if strings.Contains(prefix, "//") {
		return bad("empty path segment in the prefix")
	}
	return bucket, prefix, nil
}

// Parse builds the Location of the remote at address (s3://bucket/prefix) the way the AWS
// tools do, reading env:
//
//   - endpoint: AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL, else the profile's
//     endpoint_url in the config file, else Amazon S3 (s3.amazonaws.com); an http://
//     endpoint is reached without TLS;
//   - region: AWS_REGION, else AWS_DEFAULT_REGION, else the profile's region, else us-east-1;
//   - credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the
//     profile (AWS_PROFILE, else "default") in the shared credentials file
//     (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials) and config file
//     (AWS_CONFIG_FILE, else ~/.aws/config); with none, requests go unsigned;
//   - addressing: path-style for any endpoint other than Amazon's, or when
//     FEDPIPE_S3_PATH_STYLE=true; virtual-hosted otherwise.
func Parse(address string, env func(string) string) (*Location, error) {
	bucket, prefix, err := ParseURL(address)
	if err != nil {
		return nil, err
	}
	c := &Location{Bucket: bucket, prefix: prefix}
	profile := env("AWS_PROFILE")
	if profile == "" {
		profile = "default"
	}
	fileRegion, fileEndpoint := profileSettings(configFile(env), profile)

	endpoint := firstNonEmpty(env("AWS_ENDPOINT_URL_S3"), env("AWS_ENDPOINT_URL"), fileEndpoint)
	amazon := endpoint == ""
	if amazon {
		endpoint = "https://s3.amazonaws.com"
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("%w: endpoint %q: want http(s)://HOST[:PORT] (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or endpoint_url in the AWS config file)",
			backend.ErrInvalid, backend.RedactURL(endpoint))
	}
	c.Endpoint, c.Secure = u.Host, u.Scheme == "https"
	c.Region = firstNonEmpty(env("AWS_REGION"), env("AWS_DEFAULT_REGION"), fileRegion, "us-east-1")
	c.PathStyle = !amazon || strings.EqualFold(env("FEDPIPE_S3_PATH_STYLE"), "true")

	var providers []credentials.Provider
	if env("AWS_ACCESS_KEY_ID") != "" || env("AWS_SECRET_ACCESS_KEY") != "" {
		if env("AWS_ACCESS_KEY_ID") == "" || env("AWS_SECRET_ACCESS_KEY") == "" {
			return nil, fmt.Errorf("%w: set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither", backend.ErrInvalid)
		}
		providers = append(providers, &credentials.Static{Value: credentials.Value{
			AccessKeyID: env("AWS_ACCESS_KEY_ID"), SecretAccessKey: env("AWS_SECRET_ACCESS_KEY"),
			SessionToken: env("AWS_SESSION_TOKEN"), SignerType: credentials.SignatureV4}})
	} else {
		// An empty Filename merges AWS_CONFIG_FILE (~/.aws/config) and
		// AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials), as the AWS SDK does.
		providers = append(providers, &credentials.FileAWSCredentials{Profile: profile})
	}
	c.creds = credentials.NewChainCredentials(providers)
	return c, nil
}

// Secrets returns the credential strings that must never be printed.
func (c *Location) Secrets() []string {
	if c.creds == nil {
		return nil
	}
	v, err := c.creds.GetWithContext(nil)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range []string{v.AccessKeyID, v.SecretAccessKey, v.SessionToken} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func homeFile(env func(string) string, parts ...string) string {
	home := env("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(append([]string{home}, parts...)...)
}

func configFile(env func(string) string) string {
	return firstNonEmpty(env("AWS_CONFIG_FILE"), homeFile(env, ".aws", "config"))
}

// profileSettings reads region and endpoint_url of profile from the AWS config file
// ("[default]" or "[profile NAME]"); a missing or unreadable file sets nothing.
func profileSettings(path, profile string) (region, endpoint string) {
	if path == "" {
		return "", ""
	}
	f, err := ini.Load(path)
	if err != nil {
		return "", ""
	}
	name := "profile " + profile
	if profile == "default" && !f.HasSection(name) {
		name = "default"
	}
	if !f.HasSection(name) {
		return "", ""
	}
	s := f.Section(name)
	return s.Key("region").String(), s.Key("endpoint_url").String()
}
