//go:build unix

package export_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/agentmap/agentmap/export"
)

// An export to a FIFO reaches the process reading it, and the FIFO stays.
func TestWriteFileToAFIFO(t *testing.T) {
	files := sessionFiles(t, 3, 50)
	var want bytes.Buffer
	if _, err := Write(&want, JSONL, testOptions(""), false, Selection{}, files, nil); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		r, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer r.Close()
		b, _ := io.ReadAll(r)
		got <- b
	}()
	res, err := WriteFile(fifo, JSONL, testOptions(""), Selection{}, files, nil)
	if err != nil || res.Sessions != 3 {
		t.Fatalf("%+v, %v", res, err)
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, want.Bytes()) {
			t.Errorf("the reader got %d bytes, want %d", len(b), want.Len())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reader of the FIFO got nothing")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}
}

// An export to a full device (like /dev/full) fails with the device's
// error, blames no map, and leaves the device as it was.
func TestWriteFileToAFullDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	full := filepath.Join(t.TempDir(), "full")
	if err := syscall.Mknod(full, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
		t.Skipf("mknod: %v", err)
	}
	files := sessionFiles(t, 3, 50)
	for _, f := range Formats() {
		var blamed []string
		_, err := WriteFile(full, f, testOptions(""), Selection{}, files, func(file string, err error) {
			blamed = append(blamed, err.Error())
		})
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "export to "+full) {
			t.Errorf("%s: error %v", f, err)
		}
		if len(blamed) != 0 {
			t.Errorf("%s: maps blamed for the output: %v", f, blamed)
		}
		if fi, err := os.Lstat(full); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s: the device was replaced: %v", f, err)
		}
	}
}
