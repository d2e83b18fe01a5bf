//go:build unix

package daemon

import (
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A log reachable under a second name (a hard link, a symbolic link to it
// in another project's directory) is read once, under its first name: read
// twice, every line would count twice. The file, once its first name is
// gone, is followed under the other.
func TestSecondNameOfALogIsReadOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("links")
	}
	r := newRig(t)
	r.append("s1.jsonl", line("s1", "user"), line("s1", "llm"))
	first := filepath.Join(r.proj, "s1.jsonl")
	other, third := filepath.Join(r.root.Dir, "projects", "-w-other"), filepath.Join(r.root.Dir, "projects", "-w-third")
	os.MkdirAll(other, 0o700)
	os.MkdirAll(third, 0o700)
	if err := os.Link(first, filepath.Join(other, "s1.jsonl")); err != nil {
		t.Skipf("hard link: %v", err)
	}
	if err := os.Symlink(first, filepath.Join(third, "s1.jsonl")); err != nil {
		t.Skipf("symbolic link: %v", err)
	}
	r.once()
	if got, want := r.mapOf("s1"), fakeMap(map[string][]string{"": {"user", "llm"}}); got != want {
		t.Fatalf("s1 under three names:\n%s\nwant:\n%s", got, want)
	}
	r.append("s1.jsonl", line("s1", "result"))
	r.once()
	if got, want := r.mapOf("s1"), fakeMap(map[string][]string{"": {"user", "llm", "result"}}); got != want {
		t.Fatalf("s1 grown:\n%s\nwant:\n%s", got, want)
	}
	// Its first name gone, the file is followed under the hard link, from
	// where it was: nothing read again.
	os.Remove(first)
	r.append("../-w-other/s1.jsonl", line("s1", "user"))
	r.once()
	if got, want := r.mapOf("s1"), fakeMap(map[string][]string{"": {"user", "llm", "result", "user"}}); got != want {
		t.Fatalf("s1 under its second name:\n%s\nwant:\n%s", got, want)
	}
}

// What is at the control socket's name and is no socket (a file, a
// directory) is not agentmap's to remove: it stays, and the daemon runs
// without its socket, saying why.
func TestControlSocketNameHoldingAFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no control socket")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "agentmap.sock")
	if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := listenControl(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		ln.Close()
		t.Fatal("a regular file was taken for a stale socket")
	}
	if b, rerr := os.ReadFile(path); rerr != nil || string(b) != "mine" {
		t.Errorf("the file at the socket's name: %q, %v", b, rerr)
	}
	if !strings.Contains(err.Error(), "is not a socket (a regular file)") {
		t.Errorf("error: %v", err)
	}
	// A socket left by a daemon that died is removed and listened on.
	os.Remove(path)
	old, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	old.(*net.UnixListener).SetUnlinkOnClose(false)
	old.Close()
	ln, err = listenControl(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("a stale socket: %v", err)
	}
	ln.Close()
}
