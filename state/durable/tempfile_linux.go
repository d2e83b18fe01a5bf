package durable

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// tempFile is a batch's temporary file on Linux: a bare descriptor. An
// os.File would cost five more system calls per map (the runtime tries to
// add every file it opens to its poller, which refuses regular files) and
// a Lstat of the target in os.Rename.
type tempFile struct {
	fd   int
	name string
}

// createTemp creates a new private file ".<base>.tmp-<random>" in dir, the
// name os.CreateTemp would give it (RemoveOrphans and readers skipping
// dot files rely on it), then sets perm exactly (the umask may narrow it).
func createTemp(dir, base string, perm fs.FileMode) (*tempFile, error) {
	prefix := filepath.Join(dir, "."+base+".tmp-")
	for try := 0; ; try++ {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		fd, err := retryEINTR(func() (int, error) {
			return unix.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		})
		if errors.Is(err, unix.EEXIST) && try < 10000 {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		t := &tempFile{fd: fd, name: name}
		if _, err := retryEINTR(func() (int, error) { return 0, unix.Fchmod(fd, uint32(perm.Perm())) }); err != nil {
			t.close()
			unix.Unlink(name)
			return nil, &fs.PathError{Op: "chmod", Path: name, Err: err}
		}
		return t, nil
	}
}

func (t *tempFile) write(p []byte) error {
	for len(p) > 0 {
		n, err := retryEINTR(func() (int, error) { return unix.Write(t.fd, p) })
		if err != nil {
			return &fs.PathError{Op: "write", Path: t.name, Err: err}
		}
		p = p[n:]
	}
	return nil
}

func (t *tempFile) sync() error {
	if _, err := retryEINTR(func() (int, error) { return 0, unix.Fsync(t.fd) }); err != nil {
		return &fs.PathError{Op: "sync", Path: t.name, Err: err}
	}
	return nil
}

// close is called once per file.
func (t *tempFile) close() error {
	if err := unix.Close(t.fd); err != nil {
		return &fs.PathError{Op: "close", Path: t.name, Err: err}
	}
	return nil
}

// rename is os.Rename without its Lstat of the target (which only turns
// renaming over a directory into EEXIST: a map's target is never one, and
// the kernel refuses it with EISDIR anyway).
func rename(from, to string) error {
	if _, err := retryEINTR(func() (int, error) { return 0, unix.Rename(from, to) }); err != nil {
		return &fs.PathError{Op: "rename", Path: from, Err: err}
	}
	return nil
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}
