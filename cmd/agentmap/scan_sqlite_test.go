package main

import (
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/daemon"

	_ "modernc.org/sqlite"
)

// openCodeHome lays the recorded OpenCode store where OpenCode keeps it in
// a private home, and returns its path.
func openCodeHome(t *testing.T) string {
	t.Helper()
	home := privateHome(t)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("OPENCODE_DB", "")
	raw, err := os.ReadFile(filepath.Join("..", "..", "watchers", "opencode", "testdata", "opencode-1.18.33.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ".local", "share", "opencode", "opencode.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// withHotJournal leaves beside the store at path the journal of a write
// that never finished, as a writer killed mid-commit does: the store and
// its journal are copied while a transaction that spilled to disk is open.
func withHotJournal(t *testing.T, path string) {
	t.Helper()
	work := filepath.Join(t.TempDir(), filepath.Base(path))
	copyFile(t, path, work)
	db, err := sql.Open("sqlite", "file:"+work+"?_pragma=journal_mode(delete)&_pragma=cache_size(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`CREATE TABLE filler (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200)
		INSERT INTO filler SELECT randomblob(4000) FROM n`); err != nil {
		t.Fatal(err)
	}
	copyFile(t, work, path)
	copyFile(t, work+"-journal", path+"-journal")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// A store a scan cannot read is an error of the scan, named as such, and
// not "no agent's logs were found"; one that cannot be read for a reason
// that waiting does not change (a hot journal a read-only reader may not
// roll back) is given up on at once.
func TestScanOfAStoreLeftWithAHotJournal(t *testing.T) {
	path := openCodeHome(t)
	withHotJournal(t, path)
	data := filepath.Join(t.TempDir(), "data")
	start := time.Now()
	code, stdout, stderr := run(t, "scan", "--data-dir", data)
	took := time.Since(start)
	if code != exitFailure || !strings.Contains(stderr, "agentmap scan: 1 database could not be read (see the log)") ||
		!strings.Contains(stderr, "scan: done with errors") || strings.Contains(stdout, "no agent's logs were found") {
		t.Fatalf("scan of a store with a hot journal: exit %d, %q %q", code, stdout, stderr)
	}
	if took > 4*time.Second {
		t.Errorf("scan waited %s on an error that waiting does not change", took)
	}
	if !strings.Contains(stderr, `reason="left mid-write by a stopped writer (hot journal)"`) {
		t.Errorf("the log does not say why the store could not be read: %q", stderr)
	}
}

// A store its agent holds locked through the whole scan is waited for a
// little, then counted as not read: the scan fails.
func TestScanOfALockedStore(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the scan's tries at a locked store")
	}
	path := openCodeHome(t)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	defer db.Exec(`ROLLBACK`)
	if _, err := db.Exec(`UPDATE session SET title = title`); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	code, stdout, stderr := run(t, "scan", "--data-dir", data)
	if code != exitFailure || !strings.Contains(stderr, "agentmap scan: 1 database could not be read (see the log)") ||
		strings.Contains(stdout, "no agent's logs were found") {
		t.Fatalf("scan of a locked store: exit %d, %q %q", code, stdout, stderr)
	}
	if n := strings.Count(stderr, "level=WARN"); n > 4 {
		t.Errorf("%d warnings for one locked store:\n%s", n, stderr)
	}
}

// status names the stores the daemon cannot read, as it does logs.
func TestStatusShowsUnreadableDatabases(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		n    int
		want string
	}{
		{1, "retrying:   1 database cannot be read (locked by its writer; next try " + formatTime(at) + "): their sessions are not updated\n"},
		{2, "retrying:   2 databases cannot be read (locked by its writer; next try " + formatTime(at) + "): their sessions are not updated\n"},
	} {
		var b strings.Builder
		writeFaultStatus(&b, daemon.Status{UnreadableDBs: &daemon.UnreadableLogs{Count: tc.n, Reason: "locked by its writer", RetryAt: at}})
		if b.String() != tc.want {
			t.Errorf("status of %d unreadable databases: %q, want %q", tc.n, b.String(), tc.want)
		}
	}
}
