package state

import (
	"errors"
	"io/fs"
	"path/filepath"
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
