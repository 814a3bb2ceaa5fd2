package dirremote

import (
	"fmt"
	"io"

	"github.com/fedpipe/fedpipe/artifacts/osfile"
	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
)

// ReadRegular reads the file at path, which must be a regular file (a symbolic link to one
// is followed) of at most limit bytes. The file is opened without blocking, so a named pipe
// in its place is refused at once rather than waited on, and its type and size are checked
// on the opened file before anything is read: a device such as /dev/zero, or a sparse file
// claiming more than limit, is refused without reading it. The read itself stops at limit+1
// bytes, so a file growing meanwhile cannot make it read more. Refusals wrap
// backend.ErrUnreadableObject and name the file; a missing file is an error wrapping
// fs.ErrNotExist, as os.ReadFile's.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := openNonblocking(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &backend.UnreadableError{Where: path, Why: "is " + osfile.Kind(st.Mode()) + ", not a regular file; fedpipe reads only regular files there"}
	}
	if st.Size() > limit {
		return nil, &backend.UnreadableError{Where: path, Why: fmt.Sprintf("holds %d bytes, more than the %d its entry allows", st.Size(), limit)}
	}
	data := make([]byte, 0, st.Size())
	data, err = readAllInto(data, io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, &backend.UnreadableError{Where: path, Why: fmt.Sprintf("grew past the %d bytes its entry allows while it was read", limit)}
	}
	return data, nil
}

// readAllInto appends everything r yields to buf (which may have the capacity expected).
func readAllInto(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
