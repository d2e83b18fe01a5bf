//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/state/datadir"
)

// uninstall --purge leaves alone a data directory a daemon is running on
// (holding its lock): removed from under it, the daemon stops, and a
// supervisor starts it again, which makes the directory anew.
func TestPurgeRefusesADirectoryInUse(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	conf := filepath.Join(home, "config.toml")
	if err := os.WriteFile(conf, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTMAP_CONFIG", conf)
	data := filepath.Join(t.TempDir(), "data")
	lock := heldDataDir(t, data)
	uninstall := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := dispatch(context.Background(), append([]string{"uninstall", "--purge", "--data-dir", data}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	want := "will not remove " + data + ": an agentmap daemon is running on it (it holds " + filepath.Join(data, daemon.LockName) + " locked); " +
		"stop it first (agentmap stop for the service, else end the agentmap run or scan using it), then run uninstall --purge again"

	code, stdout, stderr := uninstall("--dry-run")
	if code != exitOK || strings.Count(stdout, "would refuse: "+want) != 1 || stderr != "" { // said once
		t.Errorf("dry run: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = uninstall()
	if code != exitFailure || stderr != "agentmap uninstall: "+want+"\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(data, datadir.Marker)); err != nil {
		t.Fatal("the directory in use was removed")
	}

	// The check took the lock only for as long as it asked: once the
	// daemon is gone, the purge goes ahead.
	lock.Close()
	if code, stdout, stderr := uninstall("--dry-run"); code != exitOK || strings.Contains(stdout, "refuse") || stderr != "" {
		t.Errorf("dry run, no daemon: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, _, stderr := uninstall(); code != exitOK {
		t.Errorf("no daemon: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the data directory is still there: %v", err)
	}
}

// heldDataDir makes data a data directory and holds its lock, as a
// running daemon or scan does, until the test ends; it returns the
// locked file.
func heldDataDir(t *testing.T, data string) *os.File {
	t.Helper()
	if err := datadir.Claim(data); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(data, daemon.LockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	return lock
}
