//go:build unix

package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A daemon removes the control socket at exit only while it is its own:
// one another daemon made at the same path since stays.
func TestControlSocketRemovedOnlyIfOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentmap.sock")
	first, err := listenControl(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := listenControl(path, nil) // removes the first's, makes its own
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the first listener's close removed the second's socket: %v", err)
	}
	second.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("the socket is left after its own listener closed: %v", err)
	}
}

// A data directory too deep for a socket path of its own has its control
// socket in the short directory, under a name both the daemon and a
// command compute from the data directory alone; a short directory that
// is not this user's alone (open to others, a link) is refused by both.
func TestControlSocketOfADeepDataDirectory(t *testing.T) {
	defer func(d string) { shortSocketDir = d }(shortSocketDir)
	shortSocketDir = filepath.Join(t.TempDir(), "s")
	deep := filepath.Join(t.TempDir(), strings.Repeat("x", 60), strings.Repeat("y", 60), "data")
	path := ControlPath(deep)
	if filepath.Dir(path) != shortSocketDir || len(path) > maxSocketPath {
		t.Fatalf("control path of a deep data directory: %s", path)
	}
	if again := ControlPath(deep + "/"); again != path {
		t.Fatalf("the same data directory, written otherwise, has another socket: %s and %s", path, again)
	}
	if other := ControlPath(deep + "2"); other == path {
		t.Fatal("two data directories share a socket")
	}
	// The same directory spelled otherwise: relative, through a link.
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	path = ControlPath(deep) // its links resolved now that it exists
	link := filepath.Join(t.TempDir(), "d")
	os.Symlink(deep, link)
	if got := ControlPath(link); got != path {
		t.Errorf("through a link: %s, want %s", got, path)
	}
	t.Chdir(deep)
	if got := ControlPath("."); got != path {
		t.Errorf("as \".\" from inside it: %s, want %s", got, path)
	}
	if short := filepath.Join(t.TempDir(), "data"); ControlPath(short) != filepath.Join(short, "agentmap.sock") {
		t.Fatalf("a short data directory's socket moved: %s", ControlPath(short))
	}
	if _, err := dialControl(path); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("dial before the directory exists: %v, want ErrNoDaemon", err)
	}
	ln, err := listenControl(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := dialControl(path)
	if err != nil {
		t.Fatalf("dial the deep data directory's socket: %v", err)
	}
	c.Close()
	ln.Close()
	if fi, err := os.Stat(shortSocketDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("short socket directory: %v %v", fi, err)
	}

	os.Chmod(shortSocketDir, 0o755)
	if _, err := listenControl(path, nil); err == nil || !strings.Contains(err.Error(), "not this user's alone") {
		t.Errorf("listen in a directory others may enter: %v", err)
	}
	if _, err := dialControl(path); !errors.Is(err, ErrNoDaemon) {
		t.Errorf("dial in a directory others may enter: %v, want ErrNoDaemon (no daemon can serve there)", err)
	}
	os.Chmod(shortSocketDir, 0o700)
	os.Rename(shortSocketDir, shortSocketDir+".real")
	os.Symlink(shortSocketDir+".real", shortSocketDir)
	if _, err := listenControl(path, nil); err == nil {
		t.Error("listen through a link in place of the directory")
	}
}
