//go:build unix

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// An output FIFO no one reads blocks the open itself: a signal (the
// command's context) ends the wait, with an error that says what it waited
// for, instead of the command waiting through every Ctrl-C.
func TestOutputToAFIFONoOneReadsEndsWithTheSignal(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "out")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	ended := make(chan error, 1)
	go func() { ended <- writeOutput(ctx, fifo, []byte("<html>")) }()
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("a write no one read succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the signal did not end the wait for a reader")
	}
	// The open left waiting takes its reader now, and is done.
	r, err := os.Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(r)
	r.Close()
}
