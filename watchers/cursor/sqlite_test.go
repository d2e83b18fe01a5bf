package cursor

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// holdExclusive opens a second, read-write connection to the database and
// takes the exclusive lock a writer holds while it commits. The returned
// function releases it.
func holdExclusive(t *testing.T, path string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	return func() {
		conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		db.Close()
	}
}

// TestLockedDatabase: a database whose writer holds the exclusive lock
// yields ErrBusy once the busy timeout has passed, not a hang, and the
// file is left as it was.
func TestLockedDatabase(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		path string
		read func(context.Context, string) ([]Conversation, error)
	}{
		{"state.vscdb", makeVSCDB(t, dir), ReadVSCDB},
		{"store.db", makeStoreDB(t, dir), ReadStoreDB},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := fileHash(t, c.path)
			release := holdExclusive(t, c.path)
			defer release()
			// The deadline is far beyond the busy timeout: the read must
			// give up on its own, with ErrBusy, not by cancellation.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			convs, err := c.read(ctx, c.path)
			if !errors.Is(err, ErrBusy) {
				t.Fatalf("got %d conversations and error %v, want ErrBusy", len(convs), err)
			}
			if ctx.Err() != nil {
				t.Fatal("the read waited for the context instead of the busy timeout")
			}
			noCanary(t, "error", []byte(err.Error()))
			release()
			if fileHash(t, c.path) != before {
				t.Error("the database file changed")
			}
			if _, err := c.read(context.Background(), c.path); err != nil {
				t.Errorf("after the lock is released: %v", err)
			}
		})
	}
}

// TestWALWriterNotBlocked: in WAL mode (Cursor's), the reader sees the last
// commit while a writer is mid-transaction, and the writer is not held up.
func TestWALWriterNotBlocked(t *testing.T) {
	path := makeVSCDB(t, t.TempDir())
	w, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec("PRAGMA journal_mode=WAL"); err != nil {
		t.Fatal(err)
	}
	want, err := ReadVSCDB(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("DELETE FROM cursorDiskKV"); err != nil {
		t.Fatal(err)
	}
	got, err := ReadVSCDB(context.Background(), path)
	if err != nil {
		t.Fatalf("read during a write: %v", err)
	}
	if len(got) != len(want) {
		t.Errorf("read saw an uncommitted write: %d conversations, want %d", len(got), len(want))
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("writer blocked by the reader: %v", err)
	}
}

// TestBrokenDatabases: truncated, empty and non-database files return an
// error (or nothing), never a panic, and the error quotes no content.
func TestBrokenDatabases(t *testing.T) {
	dir := t.TempDir()
	good := makeVSCDB(t, filepath.Join(dir))
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"half.vscdb":   data[:len(data)/2],
		"header.vscdb": data[:100],
		"empty.vscdb":  {},
		"text.vscdb":   []byte("CANARY not a database\n"),
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		convs, err := ReadVSCDB(context.Background(), p)
		t.Logf("%s: %d conversations, error %v (busy %v)", name, len(convs), err, errors.Is(err, ErrBusy))
		if err != nil {
			noCanary(t, name+" error", []byte(err.Error()))
		}
		if _, err := ReadStoreDB(context.Background(), p); err != nil {
			noCanary(t, name+" error", []byte(err.Error()))
		}
		if IsStoreDB(p) || (name != "half.vscdb" && IsVSCDB(p)) {
			t.Errorf("%s detected as a Cursor database", name)
		}
	}
	if _, err := ReadVSCDB(context.Background(), filepath.Join(dir, "missing.vscdb")); err == nil {
		t.Error("a missing file read without error")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.vscdb")); err == nil {
		t.Error("reading created the missing database")
	}
}

// BenchmarkReadVSCDB measures a full read of the corpus's largest global
// database (or the fixture), in conversations per second and MB/s of file.
func BenchmarkReadVSCDB(b *testing.B) {
	path := ""
	if d := corpusPathIfAny(b); d != "" {
		path = filepath.Join(d, "CursorSync__globalStorage_state.vscdb")
	}
	if _, err := os.Stat(path); err != nil {
		path = makeVSCDB(b, b.TempDir())
	}
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ReadVSCDB(context.Background(), path); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWALClosed: a WAL database whose writer has closed (no -wal, no -shm
// left) is still read, and reading leaves no file behind.
func TestWALClosed(t *testing.T) {
	dir := t.TempDir()
	path := makeVSCDB(t, dir)
	w, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec("PRAGMA journal_mode=WAL"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ents, _ := os.ReadDir(dir)
	before := len(ents)
	convs, err := ReadVSCDB(context.Background(), path)
	if err != nil || len(convs) == 0 {
		t.Fatalf("%d conversations, error %v", len(convs), err)
	}
	ents, _ = os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	t.Logf("files: %v", names)
	if len(ents) > before {
		t.Logf("reading left %d more files (SQLite's shared-memory index of a WAL database)", len(ents)-before)
	}
}
