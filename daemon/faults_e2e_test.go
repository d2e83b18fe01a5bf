package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Faults of the disk under the data directory, injected for real: a small
// tmpfs filled to the last byte (disk full), and the immutable attribute
// on state.db (a file not even root can write). Both need root; without
// it, or where the file system refuses, the tests skip and say why.

// smallDisk mounts a tmpfs of size bytes at a new directory.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("disk-full injection mounts a tmpfs: needs root")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	os.MkdirAll(dir, 0o700)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fillDisk writes a file until the disk is full; removing it clears the
// fault.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	small := make([]byte, 512)
	for {
		if _, err := f.Write(small); err != nil {
			break
		}
	}
	return path
}

// immutable sets or clears the immutable attribute of a file.
func immutable(t *testing.T, path string, on bool) {
	t.Helper()
	flag := "-i"
	if on {
		flag = "+i"
	}
	if os.Geteuid() != 0 {
		t.Skip("an unwritable state.db for root needs chattr +i: needs root")
	}
	if out, err := exec.Command("chattr", flag, path).CombinedOutput(); err != nil {
		if on {
			t.Skipf("chattr +i refused (%v: %s)", err, strings.TrimSpace(string(out)))
		}
		t.Fatalf("chattr -i: %v: %s", err, out)
	}
}

// daemonStatus asks the running daemon for its status.
func daemonStatus(t *testing.T, bin, home, data string) Status {
	t.Helper()
	return asUser{bin: bin}.status(t, home, data)
}

// statusOf runs a status --json command and decodes its answer.
func statusOf(t *testing.T, cmd *exec.Cmd) Status {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var st Status
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	return st
}

// faultWhileFollowing runs one daemon: half of every log is mapped; then
// the fault is injected and the rest of every log written; status must
// show the fault (last error, logs waiting, sessions not flushed, bytes
// behind); then the fault is cleared, and with no further change to any
// log the maps must become `agentmap build` of the complete logs.
func faultWhileFollowing(t *testing.T, data string, inject func() (clear func())) {
	sr := newScanRig(t, 2)
	p := startDaemon(t, sr.bin, sr.home, data)
	defer func() {
		if p.cmd.ProcessState == nil {
			p.kill()
		}
	}()
	waitStore(t, data, expected(t, sr.bin, sr.paths), p)
	clear := inject()
	for _, f := range sr.feeds {
		f.write(t, len(f.data))
	}
	deadline := time.Now().Add(30 * time.Second)
	var st Status
	for {
		st = daemonStatus(t, sr.bin, sr.home, data)
		if st.Uncommitted > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var live int
	var behind int64
	for _, a := range st.Agents {
		live += a.Live
		behind += a.Behind
	}
	if st.Uncommitted == 0 || live == 0 || behind == 0 || st.LastError == nil || st.RetryAt.IsZero() {
		clear()
		t.Fatalf("status does not show the fault: %+v\n%s", st, tailOf(p.log.String(), 3000))
	}
	t.Logf("under the fault: %d logs waiting, %d sessions live, %d bytes behind, last error %q",
		st.Uncommitted, live, behind, st.LastError.Message)
	clear()
	want := expected(t, sr.bin, sr.paths)
	waitStore(t, data, want, p)
	// Behind is then only the last lines that have no newline (used in
	// the maps, never committed).
	var unfinished int64
	for _, f := range sr.feeds {
		unfinished += int64(len(f.data) - bytes.LastIndexByte(f.data, '\n') - 1)
	}
	st = daemonStatus(t, sr.bin, sr.home, data)
	behind = 0
	for _, a := range st.Agents {
		behind += a.Behind
		if a.Live != 0 {
			t.Errorf("after recovery %s: %d live", a.Agent, a.Live)
		}
	}
	if behind != unfinished {
		t.Errorf("after recovery: %d bytes behind, want %d (the unfinished last lines)", behind, unfinished)
	}
	if st.Uncommitted != 0 {
		t.Errorf("after recovery: %d logs still waiting", st.Uncommitted)
	}
	p.stop(t)
	t.Logf("%d maps identical to agentmap build after the fault cleared", len(want))
}

func TestDiskFullWhileFollowing(t *testing.T) {
	disk := smallDisk(t, "32m")
	data := filepath.Join(disk, "data")
	faultWhileFollowing(t, data, func() func() {
		filler := fillDisk(t, disk)
		return func() { os.Remove(filler) }
	})
}

func TestUnwritableStateWhileFollowing(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	faultWhileFollowing(t, data, func() func() {
		immutable(t, StatePath(data), true)
		return func() { immutable(t, StatePath(data), false) }
	})
}

// A one-shot catch-up on a full disk fails with exit 1 and a message
// saying why, leaves the state as it was (never moved aside), and the next
// run once the disk has room maps everything.
func TestScanOnAFullDisk(t *testing.T) {
	disk := smallDisk(t, "32m")
	data := filepath.Join(disk, "data")
	sr := newScanRig(t, 2)
	if out, err := sr.scan(data); err != nil {
		t.Fatalf("scan: %v\n%s", err, out)
	}
	for _, f := range sr.feeds {
		f.write(t, len(f.data))
	}
	filler := fillDisk(t, disk)
	out, err := sr.scan(data)
	if err == nil {
		t.Fatalf("scan on a full disk succeeded:\n%s", out)
	}
	if !strings.Contains(out, "no space") {
		t.Errorf("scan does not say the disk is full:\n%s", tailOf(out, 2000))
	}
	if m, _ := filepath.Glob(StatePath(data) + ".corrupt-*"); len(m) > 0 {
		t.Fatalf("a full disk moved the state aside: %v", m)
	}
	os.Remove(filler)
	if out, err := sr.scan(data); err != nil {
		t.Fatalf("scan after the disk has room: %v\n%s", err, out)
	}
	if diff := diffMaps(readMaps(t, MapsDir(data)), expected(t, sr.bin, sr.paths)); len(diff) > 0 {
		t.Fatalf("maps differ from agentmap build: %v", diff)
	}
}
