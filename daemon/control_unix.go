//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// listenControl creates the socket 0600 in the data dir (itself 0700). A
// socket left by a daemon that died is removed: this process holds the
// state lock, so no other daemon can be serving it.
func listenControl(path string, log *slog.Logger) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale control socket: %w", err)
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

func dialControl(path string) (net.Conn, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return nil, ErrNoDaemon
		}
		return nil, err
	}
	return c, nil
}
