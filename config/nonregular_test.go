//go:build unix

package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A config path that holds a named pipe or a directory is an error saying
// so, at once: the open of a pipe does not wait for a writer.
func TestLoadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sub := filepath.Join(dir, "dir.toml")
	os.Mkdir(sub, 0o700)
	for path, kind := range map[string]string{fifo: "named pipe", sub: "directory"} {
		done := make(chan error, 1)
		go func() {
			_, err := Load(path)
			done <- err
		}()
		select {
		case err := <-done:
			want := path + " is not a regular file (a " + kind + ")"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Load(%s): %v, want %q", filepath.Base(path), err, want)
			}
			if _, ok, derr := DataDirOf(path); ok || derr == nil {
				t.Errorf("DataDirOf(%s): ok %v, %v", filepath.Base(path), ok, derr)
			}
		case <-time.After(5 * time.Second):
			if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close() // lets the open return
			}
			t.Fatalf("Load(%s) blocked", filepath.Base(path))
		}
	}
}

// sink.postgres.url_file holding a named pipe is an error, not a wait: the
// daemon reads it at every start and reload.
func TestSinkURLFileThatIsAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "url")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	err := withoutWaiting(t, fifo, func() error {
		_, err := SinkPostgres{URLFile: fifo}.SinkURL()
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
		t.Errorf("SinkURL: %v", err)
	}
}

// The hash key file holding a named pipe (the owner's, mode 0600, which
// the check of its owner and mode lets pass) is an error saying so, not a
// wait: build --hash-key-file, scan and the daemon read it.
func TestHashKeyFileThatIsAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "hash.key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for name, load := range map[string]func(string) ([]byte, error){"LoadOrCreateHashKey": LoadOrCreateHashKey, "LoadHashKey": LoadHashKey} {
		err := withoutWaiting(t, fifo, func() error {
			_, err := load(fifo)
			return err
		})
		if want := "hash key " + fifo + " is not a regular file (a named pipe)"; err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}

// withoutWaiting runs f, which reads the named pipe at fifo, and returns
// its error; f still waiting after five seconds fails the test, once a
// writer's open has let it go.
func withoutWaiting(t *testing.T, fifo string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close() // let the stuck read end
		}
		t.Fatalf("%s waited on the named pipe", filepath.Base(fifo))
		return nil
	}
}
