//go:build unix

package durable

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO is written through to the process reading it, and stays a FIFO.
func TestWriteOutputFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		r, err := os.Open(fifo)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer r.Close()
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	data := strings.Repeat("line\n", 50000) // more than a pipe holds
	done := make(chan error, 1)
	go func() { done <- WriteOutput(fifo, []byte(data), 0o600) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the write to the FIFO never ended")
	}
	select {
	case s := <-got:
		if s != data {
			t.Errorf("the reader got %d bytes, want %d", len(s), len(data))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reader of the FIFO got nothing")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
	noTemps(t, filepath.Dir(fifo))
}

// mknod makes a character device like /dev/null (1, 3) or /dev/full
// (1, 7) in a temporary directory: only root may.
func mknod(t *testing.T, name string, minor int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|minor); err != nil {
		t.Skipf("mknod: %v", err)
	}
	return p
}

// A device is written through and stays a device, with its mode; a link
// to one writes the device too.
func TestWriteOutputDevice(t *testing.T) {
	null := mknod(t, "null", 3)
	before, err := os.Lstat(null)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteOutput(null, []byte("export"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(filepath.Dir(null), "link")
	symlink(t, "null", link)
	if err := WriteOutput(link, []byte("export"), 0o600); err != nil {
		t.Fatal(err)
	}
	isLink(t, link, "null")
	fi, err := os.Lstat(null)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 || fi.Mode() != before.Mode() {
		t.Errorf("the device was replaced or changed: %v %v", fi.Mode(), err)
	}
	noTemps(t, filepath.Dir(null))
}

// A write to a full device fails, naming the output, and the device stays.
func TestWriteOutputFullDevice(t *testing.T) {
	full := mknod(t, "full", 7)
	err := WriteOutput(full, []byte("export"), 0o600)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "write "+full+": ") {
		t.Errorf("write to a full device: %v", err)
	}
	f, err := CreateOutput(full, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Write: %v", err)
	}
	f.Abort()
	if fi, err := os.Lstat(full); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("the device was replaced: %v %v", fi.Mode(), err)
	}
}

// A link of /proc to a pipe (the /dev/fd/63 of the shell's `>(...)`) has
// text that is no path: the pipe is reached by opening the link.
func TestWriteOutputProcFDLink(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	name := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
	if _, err := os.Lstat(name); err != nil {
		w.Close()
		t.Skipf("no %s here", name)
	}
	got := make(chan string, 1)
	go func() { b, _ := io.ReadAll(r); got <- string(b) }()
	err = WriteOutput(name, []byte("through the pipe"), 0o600)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "through the pipe" {
			t.Errorf("the pipe got %q", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the pipe got nothing")
	}
}

// A name of one of the process's own descriptors (/dev/fd/N, as
// /dev/stdout is /dev/fd/1) is written through that descriptor: a file the
// shell appends to is appended to, keeping what it held and its mode, not
// emptied or replaced by a new file.
func TestOutputToAnInheritedDescriptor(t *testing.T) {
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		log := filepath.Join(t.TempDir(), "log.txt")
		if err := os.WriteFile(log, []byte("line1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		name := dir + strconv.Itoa(int(f.Fd()))
		if err := WriteOutput(name, []byte("REPORT\n"), 0o600); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := f.Write([]byte("after\n")); err != nil { // the descriptor is still open
			t.Fatalf("%s: the descriptor was closed: %v", name, err)
		}
		f.Close()
		got, _ := os.ReadFile(log)
		fi, _ := os.Stat(log)
		if string(got) != "line1\nREPORT\nafter\n" || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: %q, mode %v; want the report appended and the mode kept", name, got, fi.Mode().Perm())
		}
	}
}

// WritesThrough tells the outputs CreateOutput writes through from those
// it makes or replaces.
func TestWritesThrough(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"/dev/null": true, "/dev/stdout": true, "/dev/fd/1": true, "/proc/self/fd/2": true, fifo: true, link: true,
		file: false, dir: false, filepath.Join(dir, "none"): false,
	} {
		if got := WritesThrough(name); got != want {
			t.Errorf("WritesThrough(%s) = %v, want %v", name, got, want)
		}
	}
}
