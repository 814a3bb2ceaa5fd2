package remote

import (
	"os"

	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
)

// EnvRemote is the environment variable that names the remote when no --remote flag does.
const EnvRemote = "FEDPIPE_REMOTE"

// ErrInvalid is wrapped by errors in a remote's address or settings: the user's input, not
// a failure of the server.
var ErrInvalid = backend.ErrInvalid

// Workers says what workers started on other machines need to reach a remote of a kind.
type Workers = backend.Workers

// Config says where a remote lives and how to reach it: its kind and its resolved
// location. Resolve fills it; it holds any credentials, which String never shows.
type Config struct {
	kind backend.Kind
	loc  backend.Location
}

// String is the remote's URL: no endpoint credentials or keys, fit for logs and --json;
// empty for the zero Config.
func (c Config) String() string {
	if c.loc == nil {
		return ""
	}
	return c.loc.String()
}

// Workers says what workers launched on other machines (k8s, slurm) need to reach the
// remote, as its kind declares.
func (c Config) Workers() Workers { return c.kind.Workers }

// Resolve builds the Config of the remote at address, reading env (os.Getenv when nil).
// The address's scheme picks the registered kind (kinds.go), which parses the rest:
//
//   - s3://BUCKET/PREFIX is an S3 remote, whose endpoint, region and credentials come from
//     the AWS environment variables and files as the AWS tools read them (s3remote.Parse);
//   - file:///DIR, or an address with no scheme (an absolute or relative directory path,
//     resolved against the working directory), is a directory remote (ParseDir); it needs
//     no setting from env.
//
// An address of no registered kind is invalid.
func Resolve(address string, env func(string) string) (Config, error) {
	if env == nil {
		env = os.Getenv
	}
	k, err := backend.Lookup(address)
	if err != nil {
		return Config{}, err
	}
	loc, err := k.Parse(address, env)
	if err != nil {
		return Config{}, err
	}
	return Config{kind: k, loc: loc}, nil
}
