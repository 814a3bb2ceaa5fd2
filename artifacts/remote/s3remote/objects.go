package s3remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
)

// s3Objects keeps the objects in an S3 bucket.
type s3Objects struct {
	client *minio.Client
	bucket string
}

// notFound reports whether err is the server saying the object does not exist.
func notFound(err error) bool {
	e := minio.ToErrorResponse(err)
	return e.Code == "NoSuchKey" || e.StatusCode == http.StatusNotFound
}

// preconditionFailed reports whether a conditional PUT lost: the object exists already.
func preconditionFailed(err error) bool {
	e := minio.ToErrorResponse(err)
	return e.StatusCode == http.StatusPreconditionFailed || e.StatusCode == http.StatusConflict ||
		e.Code == "PreconditionFailed" || e.Code == "ConditionalRequestConflict"
}

func (s *s3Objects) Get(ctx context.Context, name string, limit int64) ([]byte, bool, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err != nil {
		if notFound(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	defer obj.Close()
	data, err := io.ReadAll(io.LimitReader(obj, limit+1))
	if err != nil {
		if notFound(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return nil, false, &backend.UnreadableError{Where: s.Where(name), Why: fmt.Sprintf("holds more than the %d bytes its entry allows", limit)}
	}
	return data, true, nil
}

func (s *s3Objects) putOpts(ctx context.Context, name string, data []byte, opts minio.PutObjectOptions) error {
	if opts.ContentType == "" {
		opts.ContentType = "application/octet-stream"
	}
	opts.DisableMultipart = true
	_, err := s.client.PutObject(ctx, s.bucket, name, bytes.NewReader(data), int64(len(data)), opts)
	return err
}

func (s *s3Objects) Put(ctx context.Context, name string, data []byte, contentType string) error {
	return s.putOpts(ctx, name, data, minio.PutObjectOptions{ContentType: contentType})
}

// Create is a conditional PUT (If-None-Match: *): the server refuses it when the object
// exists.
func (s *s3Objects) Create(ctx context.Context, name string, data []byte, contentType string) (bool, error) {
	opts := minio.PutObjectOptions{ContentType: contentType}
	opts.SetMatchETagExcept("*")
	if err := s.putOpts(ctx, name, data, opts); err != nil {
		if preconditionFailed(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func (s *s3Objects) Exists(ctx context.Context, name string) (bool, error) {
	_, err := s.client.StatObject(ctx, s.bucket, name, minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if notFound(err) {
		return false, nil
	}
	return false, err
}

func (s *s3Objects) List(ctx context.Context, prefix string) (map[string]string, error) {
	out := map[string]string{}
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			if notFound(obj.Err) {
				break
			}
			return nil, obj.Err
		}
		out[strings.TrimPrefix(obj.Key, prefix)] = obj.ETag
	}
	return out, nil
}

func (s *s3Objects) Scan(ctx context.Context, prefix string) ([]backend.ObjectInfo, error) {
	var out []backend.ObjectInfo
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			if notFound(obj.Err) {
				break
			}
			return nil, obj.Err
		}
		out = append(out, backend.ObjectInfo{Name: strings.TrimPrefix(obj.Key, prefix), Size: obj.Size, Modified: obj.LastModified})
	}
	return out, nil
}

func (s *s3Objects) Remove(ctx context.Context, name string) error {
	err := s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{})
	if err != nil && !notFound(err) {
		return err
	}
	return nil
}

// Where names an object's place for messages: its s3:// address.
func (s *s3Objects) Where(name string) string { return "s3://" + s.bucket + "/" + name }

// Open connects to the bucket and checks that it exists. readOnly changes nothing: an S3
// remote is opened as usual.
func (cfg *Location) Open(ctx context.Context, _ bool) (backend.Objects, error) {
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{Creds: cfg.creds, Secure: cfg.Secure,
		Region: cfg.Region, BucketLookup: lookup, MaxRetries: 3})
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w", cfg, err)
	}
	ok, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("remote %s at %s: %w (check the endpoint, the credentials and the network)", cfg, cfg.Endpoint, err)
	}
	if !ok {
		return nil, fmt.Errorf("remote %s: bucket %q does not exist at %s: create it first", cfg, cfg.Bucket, cfg.Endpoint)
	}
	return &s3Objects{client: client, bucket: cfg.Bucket}, nil
}
