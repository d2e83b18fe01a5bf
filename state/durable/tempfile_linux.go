package durable

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// tempFile is a batch's temporary file on Linux: a bare descriptor. An
// os.File would cost five more system calls per map (the runtime tries to
// add every file it opens to its poller, which refuses regular files) and
// a Lstat of the target in os.Rename.
//
// Where the filesystem has them it is an unnamed file (O_TMPFILE) of the
// target's directory, linked under the target's name once its data is
// synced: no reader can see it before, a crash before the link leaves
// nothing behind (the filesystem frees it), and a new map costs one
// directory entry instead of a temporary name made, renamed and removed.
// A target that exists already is replaced by a rename, as everywhere
// else: the file is linked under a temporary name first.
type tempFile struct {
	fd      int
	dir     string
	base    string
	name    string // its temporary name; "" while it is unnamed
	unnamed bool
}

// noTmpfile is set once O_TMPFILE proved unavailable (an old kernel, a
// filesystem without it, no /proc to link through).
var noTmpfile atomic.Bool

// procFD reports whether /proc/self/fd is there: linking an unnamed file
// goes through it (linkat with AT_EMPTY_PATH needs a privilege).
var procFD = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/fd")
	return err == nil
})

// createTemp creates a private temporary file in dir for a target named
// base, then sets perm exactly (the umask may narrow it): an unnamed one
// for a new target, a named one ".<base>.tmp-<random>" (the name
// os.CreateTemp would give it, which RemoveOrphans and readers skipping
// dot files rely on) for a target that replaces (an unnamed file would
// have to be linked under such a name before the rename anyway).
func createTemp(dir, base string, perm fs.FileMode, replaces bool) (*tempFile, error) {
	t := &tempFile{dir: dir, base: base, fd: -1}
	if !replaces && !noTmpfile.Load() && procFD() {
		fd, err := retryEINTR(func() (int, error) {
			return unix.Open(dir, unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
		})
		switch {
		case err == nil:
			t.fd, t.unnamed = fd, true
		case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
			noTmpfile.Store(true)
		default:
			return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
	}
	if t.fd < 0 {
		name, fd, err := openNamed(dir, base)
		if err != nil {
			return nil, err
		}
		t.fd, t.name = fd, name
	}
	if _, err := retryEINTR(func() (int, error) { return 0, unix.Fchmod(t.fd, uint32(perm.Perm())) }); err != nil {
		t.discard()
		return nil, &fs.PathError{Op: "chmod", Path: filepath.Join(dir, base), Err: err}
	}
	return t, nil
}

// openNamed creates a new file ".<base>.tmp-<random>" in dir.
func openNamed(dir, base string) (string, int, error) {
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
			return "", -1, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return name, fd, nil
	}
}

func (t *tempFile) write(p []byte) error {
	for len(p) > 0 {
		n, err := retryEINTR(func() (int, error) { return unix.Write(t.fd, p) })
		if err != nil {
			return &fs.PathError{Op: "write", Path: filepath.Join(t.dir, t.base), Err: err}
		}
		p = p[n:]
	}
	return nil
}

func (t *tempFile) sync() error {
	if _, err := retryEINTR(func() (int, error) { return 0, unix.Fsync(t.fd) }); err != nil {
		return &fs.PathError{Op: "sync", Path: filepath.Join(t.dir, t.base), Err: err}
	}
	return nil
}

// place puts the synced file at target: an unnamed one is linked there
// (or, when target exists, under a temporary name renamed over it), a
// named one renamed. The rename is os.Rename without its Lstat of the
// target (which only turns renaming over a directory into EEXIST; the
// kernel refuses it with EISDIR anyway). After an error the file is gone
// and target is unchanged.
func (t *tempFile) place(target string) error {
	if t.unnamed {
		err := t.link(target)
		if err == nil {
			return t.close()
		}
		if !errors.Is(err, unix.EEXIST) {
			// A system that makes unnamed files but cannot link them
			// (a sandbox's /proc): this map is retried, as a named file.
			noTmpfile.Store(true)
			t.discard()
			return &fs.PathError{Op: "link", Path: target, Err: err}
		}
		if err := t.linkTemp(); err != nil {
			t.discard()
			return err
		}
	}
	if err := t.close(); err != nil {
		unix.Unlink(t.name)
		return err
	}
	if _, err := retryEINTR(func() (int, error) { return 0, unix.Rename(t.name, target) }); err != nil {
		unix.Unlink(t.name)
		return &fs.PathError{Op: "rename", Path: t.name, Err: err}
	}
	return nil
}

// link gives the unnamed file the name path.
func (t *tempFile) link(path string) error {
	_, err := retryEINTR(func() (int, error) {
		return 0, unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(t.fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	})
	return err
}

// linkTemp gives the unnamed file a temporary name, as openNamed would.
func (t *tempFile) linkTemp() error {
	prefix := filepath.Join(t.dir, "."+t.base+".tmp-")
	for try := 0; ; try++ {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		err := t.link(name)
		if errors.Is(err, unix.EEXIST) && try < 10000 {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "link", Path: name, Err: err}
		}
		t.name, t.unnamed = name, false
		return nil
	}
}

// close is called once per file.
func (t *tempFile) close() error {
	if err := unix.Close(t.fd); err != nil {
		return &fs.PathError{Op: "close", Path: filepath.Join(t.dir, t.base), Err: err}
	}
	return nil
}

// discard drops the file: an unnamed one goes with its descriptor.
func (t *tempFile) discard() {
	unix.Close(t.fd)
	if t.name != "" {
		unix.Unlink(t.name)
	}
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}
