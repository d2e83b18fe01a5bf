//go:build unix

package sqlitero

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentmap/agentmap/internal/regular"
)

// A named pipe beside a store, where SQLite opens its -wal, -journal or
// -shm file (the -journal in its check for a hot journal, before the
// first read), is refused before SQLite opens anything: the open of a pipe
// would wait for a writer, holding a daemon or a scan for good.
func TestSideFileThatIsAPipeIsRefused(t *testing.T) {
	for _, side := range []string{"-wal", "-journal", "-shm"} {
		t.Run(side, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.vscdb")
			w, err := sql.Open("sqlite", "file:"+uriEscape(path))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a')"); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if err := syscall.Mkfifo(path+side, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				db, err := Open(context.Background(), path)
				if err == nil {
					var v string
					err = db.QueryRow("SELECT v FROM t").Scan(&v)
					db.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, regular.ErrNotRegular) {
					t.Errorf("Open with a pipe at %s: %v, want it refused as not a regular file", side, err)
				}
			case <-time.After(5 * time.Second):
				if f, err := os.OpenFile(path+side, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close() // let the stuck open end
				}
				t.Fatalf("Open waited on the pipe at %s", side)
			}
		})
	}
}
