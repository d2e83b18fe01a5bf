package state

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if _, err := OpenReadOnly(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutSessions(&Session{Key: "claude/x", Agent: "claude", NativeID: "x"}); err != nil {
		t.Fatal(err)
	}
	// A daemon holds it: read-only opening waits OpenTimeout, then says so.
	if _, err := OpenReadOnly(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("while open: %v", err)
	}
	db.Close()
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, sessions, err := ro.Load()
	if err != nil || len(sessions) != 1 || sessions[0].NativeID != "x" {
		t.Fatalf("load: %+v %v", sessions, err)
	}
	if err := ro.PutSessions(&Session{Key: "claude/y"}); err == nil {
		t.Fatal("a read-only state took a write")
	}
}

// A damaged database read alongside no daemon is an error that says it is
// damaged and what mends it, not bbolt's words alone; it is left in place.
// An emptied file says it is empty, not what bbolt's attempt to write a
// new database into a file opened for reading gave.
func TestOpenReadOnlyNamesDamage(t *testing.T) {
	for name, body := range map[string][]byte{
		"garbage": bytes.Repeat([]byte("not a database "), 4096),
		"empty":   nil,
	} {
		path := filepath.Join(t.TempDir(), "state.db")
		if err := os.WriteFile(path, body, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenReadOnly(path)
		if err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "agentmap scan") {
			t.Fatalf("%s database: %v", name, err)
		}
		if name == "empty" && (!strings.Contains(err.Error(), "the file is empty") || strings.Contains(err.Error(), "descriptor")) {
			t.Errorf("empty database: %v", err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() != int64(len(body)) {
			t.Fatalf("a read-only open moved or changed the database: %v", err)
		}
	}
}

// A state database of no bytes is not taken for a new database in
// silence: the repair says the file was empty (nothing in it to keep
// aside), and a database made since by another opener is not.
func TestEmptyStateFileIsSaid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := db.Repaired()
	if !r.Happened() || r.Aside != "" || !strings.Contains(r.Reason, "empty") {
		t.Fatalf("repair %+v: want the empty file said", r)
	}
	db.Close()
	db, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if r := db.Repaired(); r.Happened() {
		t.Fatalf("a database made since is taken for damage: %+v", r)
	}
}
