//go:build unix

package watchers

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// dirStatter stats the files of one directory by name, relative to the
// directory opened once, rather than each by its whole path: a rescan on a
// directory's turn stats every log in it, and the kernel's walk of the
// path's directories was a third of each stat's cost. A directory that
// cannot be opened has its files stat'ed by path (statFile), as before.
type dirStatter struct{ fd int }

func openDirStatter(dir string) *dirStatter {
	for {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			return &dirStatter{fd}
		}
		if err != syscall.EINTR {
			return &dirStatter{-1}
		}
	}
}

func (d *dirStatter) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
	}
}

// stat is statFile of the file name in the directory (p its path, as
// statFile takes it), following a link as os.Stat does.
func (d *dirStatter) stat(r Root, p, name, form string) (FileStat, bool) {
	if d.fd < 0 {
		return statFile(r, p, form)
	}
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, 0)
		if err == nil {
			break
		}
		if err != syscall.EINTR {
			return FileStat{}, false
		}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return FileStat{}, false
	}
	return FileStat{Path: p, Agent: r.Agent, Form: form, Archived: r.Archived(p),
		Size: st.Size, ModTime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)),
		ID: FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}}, true
}
