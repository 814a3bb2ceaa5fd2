package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// objects is what the remote's protocol needs of the place it keeps its objects: an S3
// bucket (s3Objects) or a directory on a shared filesystem (dirObjects, dir.go). Names are
// slash-separated paths such as cas/<digest>; the Remote adds its prefix before calling.
//
// Every implementation must guarantee what the protocol relies on: get never returns a
// partly written object (a put replaces an object whole or not at all); create succeeds
// for exactly one of any number of concurrent creators of a name; put, create and remove
// of different names do not interfere.
type objects interface {
	// get returns an object's bytes; found is false when it does not exist. An object of
	// more than limit bytes is refused (an error wrapping ErrUnreadableObject) without
	// reading it, and so is anything that is not a regular file in a directory.
	get(ctx context.Context, name string, limit int64) (data []byte, found bool, err error)
	// put writes an object, replacing any previous one.
	put(ctx context.Context, name string, data []byte, contentType string) error
	// create writes an object only if no object of that name exists; created is false
	// (with a nil error) when one does.
	create(ctx context.Context, name string, data []byte, contentType string) (created bool, err error)
	// exists reports whether an object exists.
	exists(ctx context.Context, name string) (bool, error)
	// list returns the objects whose names start with prefix (a folder, ending in "/"),
	// named relative to prefix, each with a tag that changes whenever the object is
	// rewritten (an ETag, or a hash of the bytes).
	list(ctx context.Context, prefix string) (map[string]string, error)
	// remove deletes an object; removing an absent one is not an error.
	remove(ctx context.Context, name string) error
	// scan returns every object whose name starts with prefix (a folder, ending in "/"),
	// named relative to prefix, with its size and last modification time as the server
	// or file server records it; it reads no object's bytes.
	scan(ctx context.Context, prefix string) ([]objectInfo, error)
}

// objectInfo is an object as scan lists it.
type objectInfo struct {
	name     string
	size     int64
	modified time.Time
}

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

func (s *s3Objects) get(ctx context.Context, name string, limit int64) ([]byte, bool, error) {
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
		return nil, false, &unreadableError{"s3://" + s.bucket + "/" + name, fmt.Sprintf("holds more than the %d bytes its entry allows", limit)}
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

func (s *s3Objects) put(ctx context.Context, name string, data []byte, contentType string) error {
	return s.putOpts(ctx, name, data, minio.PutObjectOptions{ContentType: contentType})
}

// create is a conditional PUT (If-None-Match: *): the server refuses it when the object
// exists.
func (s *s3Objects) create(ctx context.Context, name string, data []byte, contentType string) (bool, error) {
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

func (s *s3Objects) exists(ctx context.Context, name string) (bool, error) {
	_, err := s.client.StatObject(ctx, s.bucket, name, minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if notFound(err) {
		return false, nil
	}
	return false, err
}

func (s *s3Objects) list(ctx context.Context, prefix string) (map[string]string, error) {
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

func (s *s3Objects) scan(ctx context.Context, prefix string) ([]objectInfo, error) {
	var out []objectInfo
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			if notFound(obj.Err) {
				break
			}
			return nil, obj.Err
		}
		out = append(out, objectInfo{name: strings.TrimPrefix(obj.Key, prefix), size: obj.Size, modified: obj.LastModified})
	}
	return out, nil
}

func (s *s3Objects) remove(ctx context.Context, name string) error {
	err := s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{})
	if err != nil && !notFound(err) {
		return err
	}
	return nil
}

// openS3 connects to the bucket of cfg and checks that it exists.
func (r *Remote) openS3(ctx context.Context) error {
	cfg := r.cfg
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{Creds: cfg.creds, Secure: cfg.Secure,
		Region: cfg.Region, BucketLookup: lookup, MaxRetries: 3})
	if err != nil {
		return r.scrub(fmt.Errorf("remote %s: %w", cfg, err))
	}
	ok, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return r.scrub(fmt.Errorf("remote %s at %s: %w (check the endpoint, the credentials and the network)", cfg, cfg.Endpoint, err))
	}
	if !ok {
		return r.scrub(fmt.Errorf("remote %s: bucket %q does not exist at %s: create it first", cfg, cfg.Bucket, cfg.Endpoint))
	}
	r.objs = &s3Objects{client: client, bucket: cfg.Bucket}
	return nil
}
