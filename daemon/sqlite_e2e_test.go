package daemon

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// A Cursor database that changes while the daemon follows it (a new
// conversation written by the IDE) is read again, and the maps match
// `agentmap build` of the database as it then is.
func TestCursorDatabaseChangesWhileFollowing(t *testing.T) {
	corpus := corpusDir(t)
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	raw, err := os.ReadFile(filepath.Join(corpus, "cursor", "CursorSync__globalStorage_state.vscdb"))
	if err != nil {
		t.Skip(err)
	}
	dbPath := filepath.Join(home, ".config", "Cursor", "User", "globalStorage", "state.vscdb")
	os.MkdirAll(filepath.Dir(dbPath), 0o700)
	os.WriteFile(dbPath, raw, 0o600)
	p := startDaemon(t, bin, home, data)
	defer p.stop(t)
	waitStore(t, data, expected(t, bin, []string{dbPath}), p)

	// Copy the conversation with the most bubbles under a new id, as the
	// IDE would write a new one.
	db, err := sql.Open("sqlite", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	var src string
	if err := db.QueryRow(`SELECT substr(key, 10, 36) AS id FROM cursorDiskKV WHERE key LIKE 'bubbleId:%'
		GROUP BY id ORDER BY count(*) DESC LIMIT 1`).Scan(&src); err != nil {
		t.Fatal(err)
	}
	const dst = "0ddba11a-0000-4000-8000-000000000000"
	var composer string
	if err := db.QueryRow(`SELECT value FROM cursorDiskKV WHERE key = ?`, "composerData:"+src).Scan(&composer); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(composer), &doc); err != nil {
		t.Fatal(err)
	}
	doc["composerId"] = dst
	newComposer, _ := json.Marshal(doc)
	tx, _ := db.Begin()
	if _, err := tx.Exec(`INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)`, "composerData:"+dst, string(newComposer)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO cursorDiskKV (key, value) SELECT 'bubbleId:' || ? || substr(key, 46), value
		FROM cursorDiskKV WHERE key LIKE ?`, dst, "bubbleId:"+src+":%"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	want := expected(t, bin, []string{dbPath})
	found := false
	for name := range want {
		found = found || strings.HasPrefix(name, dst)
	}
	if !found {
		t.Fatalf("the new conversation is not in agentmap build's maps: %v", want)
	}
	waitStore(t, data, want, p)
}
