//go:build unix

package report

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentmap/agentmap/internal/regular"
)

// A named pipe among the map files of a directory (a store, or a folder
// given to --maps) is an error of that file, not a wait for a writer that
// never comes.
func TestDirWithANamedPipeDoesNotWait(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "a.json.gz"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		var first error
		for _, err := range Dir(dir).Maps(context.Background(), Filter{}) {
			if err != nil && first == nil {
				first = err
			}
		}
		done <- first
	}()
	select {
	case err := <-done:
		if !errors.Is(err, regular.ErrNotRegular) {
			t.Errorf("the pipe's error: %v, want it named not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading the directory waits on the named pipe")
	}
}
