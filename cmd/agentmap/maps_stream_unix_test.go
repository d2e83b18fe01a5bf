//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Maps sent down a pipe read as the file they came from: `--maps -` reads
// standard input, and a named pipe (what a process substitution, <(…),
// names) is read once, as it comes, whatever it holds (a jsonl export, a
// bundle).
func TestMapsFromAPipe(t *testing.T) {
	data, _ := smallStore(t)
	dir := t.TempDir()
	jsonl, bundle := filepath.Join(dir, "maps.jsonl.gz"), filepath.Join(dir, "maps.tar.gz")
	for out, format := range map[string]string{jsonl: "jsonl", bundle: "bundle"} {
		if code, _, stderr := run(t, "export", "--format", format, "--data-dir", data, "--out", out); code != exitOK {
			t.Fatalf("export --format %s: exit %d\n%s", format, code, stderr)
		}
	}
	_, want, _ := run(t, "usage", "session", "--data-dir", data)
	for _, file := range []string{jsonl, bundle} {
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		old := mapsStdin
		mapsStdin = bytes.NewReader(body)
		code, got, stderr := run(t, "usage", "session", "--maps", "-")
		mapsStdin = old
		if code != exitOK || got != want {
			t.Errorf("usage --maps - < %s: exit %d\n%s%s\nwant\n%s", filepath.Base(file), code, got, stderr, want)
		}

		fifo := filepath.Join(t.TempDir(), "63")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			w.Write(body)
			w.Close()
		}()
		type result struct {
			code           int
			stdout, stderr string
		}
		done := make(chan result, 1)
		go func() {
			code, got, stderr := run(t, "usage", "session", "--maps", fifo)
			done <- result{code, got, stderr}
		}()
		select {
		case r := <-done:
			if r.code != exitOK || r.stdout != want {
				t.Errorf("usage --maps <(cat %s): exit %d\n%s%s\nwant\n%s", filepath.Base(file), r.code, r.stdout, r.stderr, want)
			}
		case <-time.After(30 * time.Second):
			// Opened a second time, a pipe whose writer is gone waits
			// for another one.
			t.Fatalf("usage --maps <(cat %s) waits: the pipe is read more than once", filepath.Base(file))
		}
	}
}
