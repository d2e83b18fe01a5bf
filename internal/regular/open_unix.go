//go:build unix

package regular

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Open opens a regular file for reading, as os.Open does, and refuses
// anything else with a *NotRegularError inside an *fs.PathError. The open
// does not block: O_NONBLOCK makes a named pipe's open return at once,
// and the descriptor's fstat then says what it is.
//
// It spends less than os.Open on a regular file, which matters as a
// catch-up opens every log there is, each more than once: os.Open tries to
// register every file with the poller (two fcntl calls, a failed epoll
// registration and two more fcntl calls to undo it), where a regular file
// cannot be polled. Here a regular file costs one fstat and one fcntl more
// than the open itself.
func Open(path string) (*os.File, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err == nil {
			return keepRegular(fd, path)
		}
		if err != syscall.EINTR {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

// keepRegular returns fd as a file when it is a regular file, blocking
// again (os.NewFile would try to poll a descriptor left non-blocking), and
// closes it otherwise.
func keepRegular(fd int, path string) (*os.File, error) {
	var st unix.Stat_t
	err := fstat(fd, &st)
	if err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
		err = &NotRegularError{Kind: kindOfStat(uint32(st.Mode))}
	}
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0)
	}
	if err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func fstat(fd int, st *unix.Stat_t) error {
	for {
		err := unix.Fstat(fd, st)
		if err != syscall.EINTR {
			return err
		}
	}
}

// kindOfStat is Kind for a stat's mode bits.
func kindOfStat(mode uint32) string {
	var m fs.FileMode
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m = fs.ModeDir
	case unix.S_IFIFO:
		m = fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m = fs.ModeSocket
	case unix.S_IFCHR:
		m = fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m = fs.ModeDevice
	case unix.S_IFLNK:
		m = fs.ModeSymlink
	default:
		m = fs.ModeIrregular
	}
	return Kind(m)
}
