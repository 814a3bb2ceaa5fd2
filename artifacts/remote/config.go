package remote

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7/pkg/credentials"
	"gopkg.in/ini.v1"
)

// EnvRemote is the environment variable that names the remote when no --remote flag does.
const EnvRemote = "FEDPIPE_REMOTE"

// ErrInvalid is wrapped by errors in a remote's address or settings: the user's input, not
// a failure of the server.
var ErrInvalid = errors.New("invalid remote")

// Config says where a remote lives and how to reach it. Resolve fills it from a URL and
// the standard AWS environment variables and files; it holds the credentials, which
// String never shows. A directory remote has only Dir.
type Config struct {
	// Dir is the absolute, cleaned directory of a file:// remote; empty for S3.
	Dir string
	// Bucket and Prefix come from the URL s3://Bucket/Prefix; Prefix has no leading or
	// trailing slash and may be empty.
	Bucket, Prefix string
	// Endpoint is host[:port] of the S3 API; Secure says whether it is reached over TLS.
	Endpoint string
	Secure   bool
	// Region is the bucket's region ("us-east-1" when nothing sets it).
	Region string
	// PathStyle addresses the bucket as endpoint/bucket/key rather than as
	// bucket.endpoint/key, as self-hosted servers (versitygw, MinIO, Ceph) need.
	PathStyle bool

	creds *credentials.Credentials
}

// String is the remote's URL: no endpoint credentials or keys, fit for logs and --json.
func (c Config) String() string {
	if c.Dir != "" {
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(c.Dir)}).String()
	}
	if c.Prefix == "" {
		return "s3://" + c.Bucket
	}
	return "s3://" + c.Bucket + "/" + c.Prefix
}

// ParseURL splits s3://bucket/prefix into its bucket and prefix (without surrounding
// slashes). Query parameters are not accepted, nor user information: credentials come from
// the environment, never from the address.
func ParseURL(s string) (bucket, prefix string, err error) {
	bad := func(why string) (string, string, error) {
		return "", "", fmt.Errorf("%w: %q: %s (want s3://BUCKET/PREFIX)", ErrInvalid, redactURL(s), why)
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

// IsDirAddress reports whether address names a directory: file:… or no scheme at all.
func IsDirAddress(address string) bool {
	return strings.HasPrefix(address, "file:") || !strings.Contains(address, "://")
}

// ParseDir returns the absolute, cleaned directory that a directory remote's address
// names: file:///abs/dir (file://localhost/abs/dir is accepted too), or a plain path,
// absolute or relative to the working directory. A file URL with another host, a
// relative file: URL, or one with a query or fragment is invalid.
func ParseDir(address string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w: %q: %s (want file:///DIR or a directory path)", ErrInvalid, redactURL(address), why)
	}
	path := address
	if strings.HasPrefix(address, "file:") {
		u, err := url.Parse(address)
		if err != nil {
			return bad("not a URL")
		}
		if u.User != nil || (u.Host != "" && u.Host != "localhost") {
			return bad("a file URL names a directory of this machine: file:///DIR (three slashes)")
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return bad("no query or fragment is accepted")
		}
		if u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
			return bad("a file URL needs an absolute path; give a relative directory without file:")
		}
		path = filepath.FromSlash(u.Path)
	}
	if strings.TrimSpace(path) == "" {
		return bad("empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return bad(err.Error())
	}
	return abs, nil
}

// redactURL drops user information from an address before it is quoted in a message.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("REDACTED")
		return u.String()
	}
	return s
}

// Resolve builds the Config of the remote at address (s3://bucket/prefix) the way the AWS
// tools do, reading env (os.Getenv when nil):
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
//
// An address file:///DIR, or one with no scheme (an absolute or relative directory path,
// resolved against the working directory), names a directory remote (ParseDir); it needs
// no setting from env.
func Resolve(address string, env func(string) string) (Config, error) {
	if env == nil {
		env = os.Getenv
	}
	if IsDirAddress(address) {
		dir, err := ParseDir(address)
		if err != nil {
			return Config{}, err
		}
		return Config{Dir: dir}, nil
	}
	if scheme, _, ok := strings.Cut(address, "://"); ok && scheme != "s3" {
		return Config{}, fmt.Errorf("%w: %q: the scheme must be s3 or file (want s3://BUCKET/PREFIX, file:///DIR or a directory path)", ErrInvalid, redactURL(address))
	}
	bucket, prefix, err := ParseURL(address)
	if err != nil {
		return Config{}, err
	}
	c := Config{Bucket: bucket, Prefix: prefix}
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
		return Config{}, fmt.Errorf("%w: endpoint %q: want http(s)://HOST[:PORT] (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or endpoint_url in the AWS config file)",
			ErrInvalid, redactURL(endpoint))
	}
	c.Endpoint, c.Secure = u.Host, u.Scheme == "https"
	c.Region = firstNonEmpty(env("AWS_REGION"), env("AWS_DEFAULT_REGION"), fileRegion, "us-east-1")
	c.PathStyle = !amazon || strings.EqualFold(env("FEDPIPE_S3_PATH_STYLE"), "true")

	var providers []credentials.Provider
	if env("AWS_ACCESS_KEY_ID") != "" || env("AWS_SECRET_ACCESS_KEY") != "" {
		if env("AWS_ACCESS_KEY_ID") == "" || env("AWS_SECRET_ACCESS_KEY") == "" {
			return Config{}, fmt.Errorf("%w: set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither", ErrInvalid)
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

// secrets returns the credential strings that must never be printed.
func (c Config) secrets() []string {
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
