package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// writeStorage lays a recorded store out as OpenCode's JSON storage of the
// versions before the SQLite store (storage/session/<project>/<id>.json,
// storage/message/<session>/<id>.json, storage/part/<message>/<id>.json,
// pretty-printed as OpenCode writes them). The files are written by the
// test from what the real client stored; their layout is the one the
// current client's storage code reads. It returns the session files.
func writeStorage(t *testing.T, db, dir string) map[string]string {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	write := func(path string, v any) {
		b, _ := json.MarshalIndent(v, "", "  ")
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{}
	rows, err := conn.Query("SELECT id, project_id, coalesce(parent_id, ''), directory, version, title, time_created, time_updated FROM session")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, project, parent, dir2, version, title string
		var created, updated int64
		rows.Scan(&id, &project, &parent, &dir2, &version, &title, &created, &updated)
		s := map[string]any{"id": id, "projectID": project, "directory": dir2, "version": version, "title": title,
			"time": map[string]any{"created": created, "updated": updated}}
		if parent != "" {
			s["parentID"] = parent
		}
		p := filepath.Join(dir, "storage", "session", project, id+".json")
		write(p, s)
		files[id] = p
	}
	rows.Close()
	for _, q := range []struct{ sel, kind string }{
		{"SELECT id, session_id, '', data FROM message", "message"},
		{"SELECT id, message_id, session_id, data FROM part", "part"},
	} {
		rows, err := conn.Query(q.sel)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, owner, session, data string
			rows.Scan(&id, &owner, &session, &data)
			var v map[string]any
			json.Unmarshal([]byte(data), &v)
			v["id"] = id
			if q.kind == "message" {
				v["sessionID"] = owner
			} else {
				v["messageID"], v["sessionID"] = owner, session
			}
			write(filepath.Join(dir, "storage", q.kind, owner, id+".json"), v)
		}
		rows.Close()
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
