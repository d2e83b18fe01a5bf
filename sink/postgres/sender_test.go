package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/state"
)

// storeFixtures writes the golden maps into a map store and records their
// flushes in a state database, as the daemon does.
func storeFixtures(t *testing.T, enable bool) (*state.DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := state.Open(filepath.Join(dir, "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if enable {
		if _, err := db.Outbox(Name).Enable(time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	maps := filepath.Join(dir, "maps")
	os.MkdirAll(maps, 0o700)
	for _, f := range fixtures {
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "builder", f+".map.json"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(maps, f+".json"), raw, 0o600)
		sum := sha256.Sum256(raw)
		if err := db.PutSessions(&state.Session{Key: "x/" + f, Agent: "x", NativeID: f, Gen: 1,
			Flush: &state.Flush{Path: f + ".json", SHA256: hex.EncodeToString(sum[:]), Gen: 1, AtMs: time.Now().UnixMilli()}}); err != nil {
			t.Fatal(err)
		}
	}
	return db, maps
}

func TestSenderDeliversInTheSinksPathMode(t *testing.T) {
	_, pool := newDB(t)
	db, maps := storeFixtures(t, false)
	url := pool.Config().ConnString()
	// A map that is gone by the time it is sent is dropped from the queue.
	os.Remove(filepath.Join(maps, "cursor_transcript.json"))
	s, err := NewSender(db.Outbox(Name), maps, Config{URL: url, Label: "lab", PathMode: redact.ModeDirsOnly}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, _ := db.Outbox(Name).Stats()
	if st.Len != 0 || st.State.Sent != 2 || st.State.LastError != "" || st.State.LastOkMs == 0 {
		t.Fatalf("after the drain: %+v", st)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions WHERE path_mode = 'dirs_only'"); n != 2 {
		t.Fatalf("%d sessions in dirs_only", n)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.files WHERE path NOT LIKE '%•%' AND path <> '.'"); n != 0 {
		t.Fatalf("%d file paths left the machine in relative form", n)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.devices WHERE label = 'lab' AND device_id::text = $1", st.State.DeviceID); n != 1 {
		t.Fatal("the device row is missing")
	}
}

func TestSenderKeepsTheQueueWhenTheServerIsUnreachable(t *testing.T) {
	db, maps := storeFixtures(t, true)
	// A port nothing listens on.
	s, err := NewSender(db.Outbox(Name), maps, Config{URL: "postgres://nobody:secret-pw@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 {
		if err := s.Drain(context.Background()); err == nil {
			t.Fatal("a drain to nowhere succeeded")
		}
	}
	st, _ := db.Outbox(Name).Stats()
	if st.Len != 3 || st.Oldest == nil || st.State.Failures != 2 || st.State.LastError == "" || st.State.Sent != 0 {
		t.Fatalf("after failed drains: %+v", st)
	}
	if strings.Contains(st.State.LastError, "secret-pw") {
		t.Fatalf("the error names the password: %s", st.State.LastError)
	}
}
