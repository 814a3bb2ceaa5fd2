package dirremote

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
)

// dirObjects keeps the objects as files under a directory, which may be on a filesystem
// several machines share (NFS, Lustre, GPFS): object a/b/c is the file root/a/b/c.
//
// Writes never expose a partial object, on a local disk or over NFS:
//
//   - put writes the bytes to a temporary file in the object's own directory (a name
//     starting with tmpPrefix, which list and the protocol never read), fsyncs it, renames
//     it over the final name — rename(2) within a directory is atomic on POSIX
//     filesystems and on NFS, so a reader opens either the old file or the new one, whole
//     — and fsyncs the directory, so the new name survives a crash of the writer.
//   - create (a lease claim) writes and fsyncs a temporary file the same way, then
//     link(2)s it to the final name. link fails with EEXIST when the name exists, and the
//     server decides that atomically, so exactly one of several machines' claims wins; the
//     winner's file is complete from the moment it has the name. O_CREAT|O_EXCL of the
//     final name is atomic too (NFSv3 and later), but the file would be visible empty until
//     written, and a reader would take a half-written claim for garbage. Over NFS a link
//     whose reply was lost can be retried by the client and answer EEXIST although it
//     succeeded; as open(2)'s manual advises, the temporary file's link count then tells
//     (2: the link is ours). Filesystems without hard links fall back to O_EXCL.
//
// Temporary files left by a process killed mid-write are never read; they can be deleted
// at any time no fedpipe writes to the remote.
type dirObjects struct {
	root     string
	readOnly bool
}

// errReadOnly is what a write to a directory remote opened with Options.ReadOnly returns.
var errReadOnly = errors.New("the remote was opened read-only")

// tmpPrefix starts the name of every file being written; no object name starts with it.
const tmpPrefix = ".tmp-"

// tmpOwner names this process in its temporary files' names, HOSTTAG.PID (HOSTTAG: 8 hex
// digits of the SHA-256 of the host name), so that a later process on the same host can
// tell the leftovers of a writer that died (RemoveDeadTemps).
var tmpOwner = func() string {
	host, _ := os.Hostname()
	sum := sha256.Sum256([]byte(host))
	return hex.EncodeToString(sum[:4]) + "." + strconv.Itoa(os.Getpid())
}()

// RemoveDeadTemps removes the temporary files of writers on this host that are no longer
// running (a push or a worker killed mid-write), and returns how many it removed. A live
// writer's files, another host's, and those named by an older fedpipe (which did not
// record the writer) are left alone; a read-only remote is not touched.
func (d *dirObjects) RemoveDeadTemps() (int, error) {
	if d.readOnly {
		return 0, nil
	}
	hostTag, _, _ := strings.Cut(tmpOwner, ".")
	removed := 0
	err := filepath.WalkDir(d.root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // a folder that went meanwhile, or one this user may not read
		}
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, tmpPrefix) {
			return nil
		}
		owner, _, _ := strings.Cut(strings.TrimPrefix(name, tmpPrefix), "-")
		host, pid, ok := strings.Cut(owner, ".")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || host != hostTag || n <= 0 || processAlive(n) {
			return nil
		}
		if os.Remove(path) == nil {
			removed++
		}
		return nil
	})
	return removed, err
}

// Where names an object's place for messages: its file.
func (d *dirObjects) Where(name string) string { return d.path(name) }

func (d *dirObjects) path(name string) string {
	return filepath.Join(d.root, filepath.FromSlash(name))
}

// missing reports whether err says a file is absent (a missing folder on the way
// included).
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func (d *dirObjects) Get(_ context.Context, name string, limit int64) ([]byte, bool, error) {
	data, err := ReadRegular(d.path(name), limit)
	if missing(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// writeTemp writes data to a new temporary file beside path, fsynced, and returns its
// name; the object's folder is created if needed.
func writeTemp(path string, data []byte) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(dir, tmpPrefix+tmpOwner+"-"+hex.EncodeToString(rnd[:])+"-"+filepath.Base(path))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return "", err
	}
	err = writeSynced(f, data)
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// writeSynced writes data to f, fsyncs and closes it, returning the first error.
func writeSynced(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir fsyncs a directory, so that names created or renamed in it are durable.
// Filesystems that cannot sync a directory (EINVAL) are left as they are.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

func (d *dirObjects) Put(_ context.Context, name string, data []byte, _ string) error {
	if d.readOnly {
		return errReadOnly
	}
	return WriteFileAtomic(d.path(name), data)
}

// WriteFileAtomic writes data to path as a directory remote writes an object, safe on a
// shared filesystem: a temporary file beside it, fsynced, renamed over path, then the
// folder fsynced; a reader sees the old file or the whole new one. The folder is created
// if needed.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := writeTemp(path, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

func (d *dirObjects) Create(_ context.Context, name string, data []byte, _ string) (bool, error) {
	if d.readOnly {
		return false, errReadOnly
	}
	path := d.path(name)
	tmp, err := writeTemp(path, data)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, path)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		if n, ok := linkCount(tmp); !ok || n < 2 {
			return false, nil
		}
		// A retried link over NFS: the first attempt made the name ours.
	case errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP):
		return createExclusive(path, data)
	default:
		return false, err
	}
	return true, syncDir(filepath.Dir(path))
}

// createExclusive is create on a filesystem without hard links: O_CREAT|O_EXCL of the
// final name, then the bytes, fsynced. A reader may find the file empty or partly
// written for a moment (leaseHolder then names "another worker").
func createExclusive(path string, data []byte) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	err = writeSynced(f, data)
	if err != nil {
		return true, err
	}
	return true, syncDir(filepath.Dir(path))
}

func (d *dirObjects) Exists(_ context.Context, name string) (bool, error) {
	_, err := os.Stat(d.path(name))
	if missing(err) {
		return false, nil
	}
	return err == nil, err
}

// list reads each file under the prefix's folder: the tag is a hash of its bytes (a
// lease's body changes at every heartbeat). Only lease folders are listed, a few small
// files each.
func (d *dirObjects) List(_ context.Context, prefix string) (map[string]string, error) {
	out := map[string]string{}
	dir := d.path(strings.TrimSuffix(prefix, "/"))
	entries, err := os.ReadDir(dir)
	if missing(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpPrefix) || e.IsDir() {
			continue
		}
		data, err := ReadRegular(filepath.Join(dir, e.Name()), backend.MaxRecordBytes)
		if missing(err) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		out[e.Name()] = hex.EncodeToString(sum[:16])
	}
	return out, nil
}

func (d *dirObjects) Remove(_ context.Context, name string) error {
	if d.readOnly {
		return errReadOnly
	}
	if err := os.Remove(d.path(name)); err != nil && !missing(err) {
		return err
	}
	return nil
}

// scan walks the prefix's folder and the folders below it, skipping temporary files.
func (d *dirObjects) Scan(_ context.Context, prefix string) ([]backend.ObjectInfo, error) {
	var out []backend.ObjectInfo
	dir := d.path(strings.TrimSuffix(prefix, "/"))
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if missing(err) {
				return nil // the folder does not exist yet, or a file went meanwhile
			}
			return err
		}
		if e.IsDir() || strings.HasPrefix(e.Name(), tmpPrefix) {
			return nil
		}
		info, err := e.Info()
		if missing(err) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		out = append(out, backend.ObjectInfo{Name: filepath.ToSlash(rel), Size: info.Size(), Modified: info.ModTime()})
		return nil
	})
	return out, err
}
