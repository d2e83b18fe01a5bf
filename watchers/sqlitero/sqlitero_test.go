package sqlitero

import (
	"context"
	"database/sql"
	"errors"
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
	if err == nil || !Transient(err) {
		t.Fatalf("a torn store: %v, want a transient error", err)
	}
	if Transient(errors.New("other")) || Transient(nil) {
		t.Fatal("Transient is true for an error that is not SQLite's")
	}
}
