//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"github.com/agentmap/agentmap/internal/regular"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// shortSocketDir holds the control socket of a data directory whose own
// path is too long for one (ControlPath): a directory of this user's in
// /tmp, not os.TempDir, whose $TMPDIR a service and a shell may set apart.
var shortSocketDir = fmt.Sprintf("/tmp/agentmap-%d", os.Getuid())

// listenControl creates the socket 0600 in the data dir (itself 0700), or
// in shortSocketDir, made 0700 and checked to be this user's alone. A
// socket left by a daemon that died is removed: this process holds the
// state lock, so no other daemon can be serving it.
func listenControl(path string, log *slog.Logger) (net.Listener, error) {
	if dir := filepath.Dir(path); dir == shortSocketDir {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if err := privateDir(dir); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// Only a socket: anything else of that name is not one agentmap
	// left, and stays (the daemon then runs without a control socket,
	// and says why).
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s is not a socket (a %s): it is left as it is; move it away for the control socket", path, regular.Kind(fi.Mode()))
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove stale control socket: %w", err)
		}
	}
	// The umask keeps the socket private from its creation on; the chmod
	// makes sure of it.
	old := syscall.Umask(0o077)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	made, err := os.Stat(path)
	if err != nil {
		ln.Close()
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return &peerListener{Listener: ownSocket{ln, path, made}, uid: os.Getuid(), log: log}, nil
}

// ownSocket removes its path on close only while the path is still the
// socket it made: a daemon started while this one ran (its state database
// removed under it) has made its own there, which must stay.
type ownSocket struct {
	net.Listener
	path string
	made os.FileInfo
}

func (s ownSocket) Close() error {
	err := s.Listener.Close()
	if fi, statErr := os.Lstat(s.path); statErr == nil && os.SameFile(fi, s.made) {
		os.Remove(s.path)
	}
	return err
}

// privateDir checks that the shared directory of short socket paths is
// this user's alone: a directory (not a link), owned by this user, that no
// one else may enter. In /tmp anyone may make it first; a socket there
// that another user could replace would take this user's commands.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("the control socket's directory %s is not this user's alone (it must be a directory of uid %d, mode 0700): have it removed (in /tmp only its owner or root can), or use a data directory of a shorter path", dir, os.Getuid())
	}
	return nil
}

func dialControl(path string) (net.Conn, error) {
	if dir := filepath.Dir(path); dir == shortSocketDir {
		// No daemon can serve a socket there (it refuses a directory
		// that is not private, as listenControl does): the commands read
		// the state and the maps as with no daemon, rather than fail.
		if privateDir(dir) != nil {
			return nil, ErrNoDaemon
		}
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		// ENOTDIR: the data directory is a file, or under one: no daemon
		// serves there, and what opens the directory says what is wrong.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return nil, ErrNoDaemon
		}
		return nil, err
	}
	return c, nil
}
