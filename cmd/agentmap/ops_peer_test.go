//go:build linux || darwin

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmap/agentmap/daemon"
)

// nobody is the uid the refused client runs as.
const nobody = 65534

// The control socket serves its own user only. The socket is 0600 in a
// 0700 directory, so another user is stopped by the file system first;
// the peer check behind it is tested by loosening both, as a careless
// chmod would, and connecting as another uid.
func TestControlRefusesAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another uid")
	}
	shared, err := os.MkdirTemp("", "agentmap-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	os.Chmod(shared, 0o755)
	bin := opsBinary(t, shared)
	os.Chmod(bin, 0o755)
	home := filepath.Join(shared, "home")
	data := filepath.Join(shared, "data")
	os.MkdirAll(home, 0o755)
	os.Mkdir(data, 0o711)
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "AGENTMAP_CONFIG=")
	d := exec.Command(bin, "run", "--data-dir", data, "--root", "claude="+filepath.Join(home, "c"),
		"--root", "codex="+filepath.Join(home, "x"), "--root", "cursor="+filepath.Join(home, "u"),
		"--root", "cursor-app="+filepath.Join(home, "a"))
	d.Env = env
	var dlog lockedBuffer
	d.Stdout, d.Stderr = &dlog, &dlog
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { d.Process.Kill(); d.Wait() }()
	sock := daemon.ControlPath(data)
	waitFor(t, "the control socket", &dlog, func() bool { _, err := os.Stat(sock); return err == nil })

	asUser := func(uid uint32) (int, string) {
		t.Helper()
		c := exec.Command(bin, "status", "--no-service", "--data-dir", data)
		c.Env = env
		c.Dir = shared
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := asUser(0); code != 0 || !strings.Contains(out, "running (answering") {
		t.Fatalf("own user: exit %d\n%s", code, out)
	}
	if code, out := asUser(nobody); code == 0 || !strings.Contains(out, "permission denied") {
		t.Fatalf("another user through a 0600 socket: exit %d\n%s", code, out)
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	code, out := asUser(nobody)
	if code == 0 || !strings.Contains(out, daemon.ErrRefused.Error()) {
		t.Fatalf("another user through a world-writable socket: exit %d\n%s", code, out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(dlog.String(), "control connection refused") {
		if time.Now().After(deadline) {
			t.Fatalf("no refusal logged:\n%s", &dlog)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
