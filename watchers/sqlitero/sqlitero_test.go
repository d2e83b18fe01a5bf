package sqlitero

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenIsReadOnly(t *testing.T) {
	dir := t.TempDir()
	// A name SQLite's URI syntax would misread unless escaped.
	path := filepath.Join(dir, "store?x=1#%.db")
	w, err := sql.Open("sqlite", "file:"+uriEscape(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a')"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if !IsSQLite(path) {
		t.Fatal("IsSQLite is false for a database")
	}
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT v FROM t").Scan(&v); err != nil || v != "a" {
		t.Fatalf("read: %q %v", v, err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES ('b')"); err == nil {
		t.Fatal("a write through the read-only connection succeeded")
	}
	if _, err := os.Stat(path + "-journal"); err == nil {
		t.Fatal("the read-only open left a journal beside the store")
	}
}

func TestNotADatabase(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log.jsonl")
	os.WriteFile(log, []byte(`{"type":"user"}`+"\n"), 0o600)
	if IsSQLite(log) || IsSQLite(filepath.Join(dir, "missing")) {
		t.Fatal("IsSQLite is true for a file that is no database")
	}
	if _, err := Open(context.Background(), filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open of a missing file: %v", err)
	}
	// The header and then garbage: what a store caught mid-copy looks like.
	torn := filepath.Join(dir, "torn.db")
	os.WriteFile(torn, []byte(header+strings.Repeat("\xff", 4096)), 0o600)
	db, err := Open(context.Background(), torn)
	if err == nil {
		_, err = db.Exec("SELECT name FROM sqlite_master")
		db.Close()
	}
	if err == nil || !Transient(err) || !Damaged(err) || Locked(err) {
		t.Fatalf("a torn store: %v, want a damaged store's error", err)
	}
	if Transient(errors.New("other")) || Transient(nil) || Locked(nil) || Damaged(nil) {
		t.Fatal("Transient is true for an error that is not SQLite's")
	}
}

// A store its writer holds locked and one cut short are told apart, also
// through a reader that keeps SQLite's error as text beside a sentinel of
// its own: only the lock passes in a moment.
func TestLockedOrDamaged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.vscdb")
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(delete)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`CREATE TABLE kv (key TEXT UNIQUE, value BLOB);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200)
		INSERT INTO kv SELECT 'k:' || i, randomblob(4000) FROM n`); err != nil {
		t.Fatal(err)
	}
	read := func(path string) error {
		db, err := Open(context.Background(), path)
		if err != nil {
			return err
		}
		defer db.Close()
		var n int
		return db.QueryRow("SELECT count(*) FROM kv WHERE length(value) > 0").Scan(&n)
	}
	sentinel := errors.New("busy or changing")
	asText := func(err error) error { return fmt.Errorf("reader: %w (%v)", sentinel, err) }

	// Cut short, as a copy caught mid-way or a disk filled up leave it.
	cut := filepath.Join(dir, "cut.vscdb")
	copyFile(t, path, cut)
	if err := os.Truncate(cut, 400000); err != nil {
		t.Fatal(err)
	}
	err = read(cut)
	for _, e := range []error{err, asText(err)} {
		if !Damaged(e) || Locked(e) || !Transient(e) {
			t.Errorf("a store cut short: %v: damaged %v, locked %v", e, Damaged(e), Locked(e))
		}
	}

	// Locked by its writer for longer than the busy timeout.
	tx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("DELETE FROM kv WHERE key = 'k:1'"); err != nil {
		t.Fatal(err)
	}
	// Past the writer's cache: it takes the exclusive lock.
	if _, err := tx.Exec("PRAGMA cache_size = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE kv SET value = randomblob(4000)"); err != nil {
		t.Fatal(err)
	}
	err = read(path)
	for _, e := range []error{err, asText(err)} {
		if !Locked(e) || Damaged(e) || !Transient(e) {
			t.Errorf("a locked store: %v: locked %v, damaged %v", e, Locked(e), Damaged(e))
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
