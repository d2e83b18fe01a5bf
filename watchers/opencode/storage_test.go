package opencode

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentmap/agentmap/watchers/opencode/storagetest"
)

// writeStorage lays a recorded store out as OpenCode's JSON storage of the
// versions before the SQLite store (storagetest: the files are written by
// the test from what the real client stored, in the layout the current
// client's storage code reads). It returns the session files by id.
func writeStorage(t *testing.T, db, dir string) map[string]string {
	t.Helper()
	writes, err := storagetest.Writes(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, w := range writes {
		p := filepath.Join(dir, filepath.FromSlash(w.Path))
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, w.Data, 0o600); err != nil {
			t.Fatal(err)
		}
		if w.Session != "" {
			files[w.Session] = p
		}
	}
	return files
}

// TestStorageEqualsStore reads the JSON storage made from a recorded store
// and gets the same events as from the store: a root session file yields
// its conversation with its children as lanes, a child's file none.
func TestStorageEqualsStore(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join("testdata", "opencode-1.18.33-e2e.db")
	files := writeStorage(t, db, t.TempDir())
	fromDB, err := ReadDB(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for id, f := range files {
		if !IsStore(f) || !IsStorageSession(f) {
			t.Fatalf("%s: not recognised as a storage session", f)
		}
		convs, err := ReadStore(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var want []any
		for _, c := range fromDB {
			if c.NativeID == id {
				want = append(want, c)
			}
		}
		if len(convs) != len(want) {
			t.Errorf("%s: %d conversations, the store has %d", id, len(convs), len(want))
			continue
		}
		for _, c := range convs {
			seen++
			for _, w := range fromDB {
				if w.NativeID == c.NativeID && !reflect.DeepEqual(c.Events, w.Events) {
					t.Errorf("%s: events differ from the store's", id)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no conversation read from the storage")
	}
}
