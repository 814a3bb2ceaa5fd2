// Package s3test starts a real S3 server for tests: versitygw with its POSIX backend,
// listening on 127.0.0.1, storing objects as plain files under a temporary directory (so a
// test can corrupt one by hand).
//
// The binary is looked up as $FEDPIPE_VERSITYGW, then bin/versitygw in the repository
// (where `make versitygw` installs it, from the Go module proxy), then versitygw on $PATH.
// Without it, Start skips the test naming the command that installs it, except under
// CI=true, where a missing server is a failure.
package s3test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Version is the versitygw release the Makefile installs.
const Version = "v1.8.0"

// Test credentials: distinctive strings, so a test can grep every output for them.
const (
	AccessKey = "FEDPIPETESTACCESSKEY7Q"
	SecretKey = "fedpipe-test-secret-Zr8pWq3nLx5v"
)

// A Server is a running versitygw.
type Server struct {
	// Endpoint is http://127.0.0.1:PORT.
	Endpoint string
	// Root is the POSIX backend's directory: object KEY of bucket B is the file Root/B/KEY.
	Root string

	bin, addr, home, logPath string
	logf                     *os.File
	cmd                      *exec.Cmd // nil while stopped
}

// launch starts versitygw on s.addr and waits until it listens.
func (s *Server) launch(t testing.TB) {
	t.Helper()
	cmd := exec.Command(s.bin, "--access", AccessKey, "--secret", SecretKey, "--port", s.addr, "--quiet",
		"posix", s.Root)
	cmd.Stdout, cmd.Stderr = s.logf, s.logf
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.home}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(s.logPath)
			t.Fatalf("versitygw did not listen on %s within 15s:\n%s", s.addr, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop kills the server, as an S3 service that went away: requests to the endpoint are
// refused until Restart.
func (s *Server) Stop() {
	if s.cmd != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

// Restart starts a stopped server again on the same endpoint, with the same objects.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	s.launch(t)
}

// Binary returns the path of the versitygw binary, or "" with the places searched.
func Binary() (path, searched string) {
	var tried []string
	if p := os.Getenv("FEDPIPE_VERSITYGW"); p != "" {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, ""
		}
		tried = append(tried, p+" ($FEDPIPE_VERSITYGW)")
	}
	if root := repoRoot(); root != "" {
		p := filepath.Join(root, "bin", "versitygw")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, ""
		}
		tried = append(tried, p)
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, ""
	}
	tried = append(tried, "versitygw on $PATH")
	return "", strings.Join(tried, ", ")
}

// repoRoot finds the directory holding go.mod above the working directory.
func repoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Start runs a server for the duration of the test, with the buckets named created.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	bin, searched := Binary()
	if bin == "" {
		msg := fmt.Sprintf("no S3 server for this test: versitygw not found (looked at %s); `make versitygw` installs it (go install github.com/versity/versitygw/cmd/versitygw@%s)", searched, Version)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	logPath := filepath.Join(dir, "versitygw.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Endpoint: "http://" + addr, Root: root, bin: bin, addr: addr, home: dir, logf: logf, logPath: logPath}
	t.Cleanup(func() {
		s.Stop()
		logf.Close()
	})
	s.launch(t)
	client, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""),
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range buckets {
		if err := client.MakeBucket(context.Background(), b, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
			t.Fatalf("create bucket %s: %v", b, err)
		}
	}
	return s
}

// freeAddr returns 127.0.0.1:PORT with a port nothing listens on right now.
func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Env returns the environment a fedpipe process needs to reach the server with the test
// credentials: AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, and
// AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE pointing nowhere, so that a developer's
// own AWS files are never read.
func (s *Server) Env() []string {
	return []string{"AWS_ENDPOINT_URL=" + s.Endpoint, "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent"}
}

// Getenv looks names up in Env, for remote.Options.Env.
func (s *Server) Getenv(name string) string {
	for _, kv := range s.Env() {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v
		}
	}
	return ""
}

// ObjectPath returns the file holding object key of bucket.
func (s *Server) ObjectPath(bucket, key string) string {
	return filepath.Join(s.Root, bucket, filepath.FromSlash(key))
}
