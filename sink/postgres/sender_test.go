package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
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
	if st.Len != 0 || st.Sent != 2 || st.State.LastError != "" || st.State.LastOkMs == 0 {
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

// A path mode made stricter reaches the rows already sent: the sessions
// delivered in relative form are sent again in the new mode, and none of
// their relative paths stays in the team database; a sender of the same
// rendering sends nothing again, and a state of an earlier build (which
// kept no rendering) takes the one in use without sending again.
func TestStricterPathModeReplacesTheRowsSent(t *testing.T) {
	_, pool := newDB(t)
	db, maps := storeFixtures(t, false)
	url := pool.Config().ConnString()
	drain := func(cfg Config) {
		t.Helper()
		cfg.URL, cfg.Label = url, "lab"
		s, err := NewSender(db.Outbox(Name), maps, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	relative := "SELECT count(*) FROM agentmap.files WHERE path NOT LIKE '%•%' AND path <> '.'"
	drain(Config{})
	if n := count(t, pool, relative); n == 0 {
		t.Fatal("the fixtures sent no relative path: the test shows nothing")
	}
	drain(Config{PathMode: redact.ModeDirsOnly})
	if n := count(t, pool, relative); n != 0 {
		t.Errorf("%d relative paths stay in the team database after the sink's path mode became dirs_only", n)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions WHERE path_mode <> 'dirs_only'"); n != 0 {
		t.Errorf("%d sessions stay in another path mode", n)
	}
	st, _ := db.Outbox(Name).Stats()
	if st.State.Rendering != "dirs_only" {
		t.Errorf("rendering kept: %q", st.State.Rendering)
	}
	// The same rendering again: nothing is queued.
	if _, was, err := db.Outbox(Name).EnableRendered(time.Now(), "dirs_only"); err != nil || was != "" {
		t.Fatalf("the same rendering: was %q, %v", was, err)
	}
	if st, _ := db.Outbox(Name).Stats(); st.Len != 0 {
		t.Errorf("the same rendering queued %d sessions again", st.Len)
	}
	// A state of an earlier build kept no rendering: it takes the one in
	// use, and nothing is sent again.
	ob := db.Outbox(Name)
	old, err := ob.State()
	if err != nil {
		t.Fatal(err)
	}
	old.Rendering = ""
	if err := ob.PutState(old); err != nil {
		t.Fatal(err)
	}
	if _, was, err := ob.EnableRendered(time.Now(), "dirs_only"); err != nil || was != "" {
		t.Fatalf("a state that kept no rendering: was %q, %v", was, err)
	}
	if st, _ := ob.Stats(); st.Len != 0 || st.State.Rendering != "dirs_only" {
		t.Errorf("a state that kept no rendering: %d queued again, rendering %q", st.Len, st.State.Rendering)
	}
	// Hashed with one key, then another: the other key's hashes replace
	// the first's.
	paths := func() map[string]bool {
		t.Helper()
		rows, err := pool.Query(context.Background(), "SELECT DISTINCT path FROM agentmap.files WHERE path <> '.'")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		set := map[string]bool{}
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				t.Fatal(err)
			}
			set[p] = true
		}
		return set
	}
	drain(Config{PathMode: redact.ModeHashed, HashKey: []byte(strings.Repeat("a", 32))})
	first := paths()
	drain(Config{PathMode: redact.ModeHashed, HashKey: []byte(strings.Repeat("b", 32))})
	second := paths()
	if len(first) == 0 || len(second) == 0 {
		t.Fatalf("no files sent in hashed mode (%d, %d)", len(first), len(second))
	}
	for p := range second {
		if first[p] {
			t.Errorf("a path hashed with the first key stays after the key changed: %q", p)
		}
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
	if st.Len != 3 || st.Oldest == nil || st.State.Failures != 2 || st.State.LastError == "" || st.Sent != 0 {
		t.Fatalf("after failed drains: %+v", st)
	}
	if strings.Contains(st.State.LastError, "secret-pw") {
		t.Fatalf("the error names the password: %s", st.State.LastError)
	}
}

// A session forgotten after it was sent (privacy.exclude now covers it) is
// removed from the team database by the next drain: its row, events and
// files, found by the session id its map was stored under; the others
// stay, and nothing of it is left in the queue.
func TestSenderRetractsSessionsForgotten(t *testing.T) {
	_, pool, db, _, s := drainedFixtures(t)
	gone := fixture(t, fixtures[0]).Map.Session.ID
	if gone == fixtures[0] {
		t.Fatal("the fixture's session id is its key's: the id the map was stored under is not tested")
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions WHERE session_id = $1", gone); n != 1 {
		t.Fatalf("%d rows of the session before", n)
	}
	if err := db.Forget(state.Forgotten{Session: "x/" + fixtures[0]}); err != nil {
		t.Fatal(err)
	}
	if st, _ := db.Outbox(Name).Stats(); st.Len != 1 {
		t.Fatalf("queue after the forget: %d entries, want the retraction", st.Len)
	}
	if err := s.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions WHERE session_id = $1", gone); n != 0 {
		t.Fatalf("%d rows of the forgotten session left", n)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.events e JOIN agentmap.sessions s ON s.id = e.session WHERE s.session_id = $1", gone); n != 0 {
		t.Fatalf("%d events of the forgotten session left", n)
	}
	if n := count(t, pool, "SELECT count(*) FROM agentmap.sessions"); n != int64(len(fixtures)-1) {
		t.Fatalf("%d sessions left, want %d", n, len(fixtures)-1)
	}
	st, _ := db.Outbox(Name).Stats()
	if st.Len != 0 || st.State.Retracted != 1 || st.State.LastError != "" {
		t.Fatalf("after the retraction: %+v", st)
	}
}

// A retraction the database refuses (a role granted before retractions)
// does not hold the queue: it goes behind the maps queued after it, which
// are sent in the same drain, with no back-off; the sink reports what to
// grant, and a role with the grant delivers it.
func TestSenderRefusedRetractionDoesNotHoldTheQueue(t *testing.T) {
	srv, pool, db, maps, admin := drainedFixtures(t)
	if err := db.Forget(state.Forgotten{Session: "x/" + fixtures[0]}); err != nil {
		t.Fatal(err)
	}
	requeueMap := func(f string, gen uint64) {
		t.Helper()
		raw, _ := os.ReadFile(filepath.Join(maps, f+".json"))
		os.WriteFile(filepath.Join(maps, f+".json"), append(raw, '\n'), 0o600)
		if err := db.PutSessions(&state.Session{Key: "x/" + f, Agent: "x", NativeID: f, Gen: gen,
			Flush: &state.Flush{Path: f + ".json", SHA256: fmt.Sprint("changed", gen), Gen: gen, AtMs: time.Now().UnixMilli()}}); err != nil {
			t.Fatal(err)
		}
	}
	oldRole := roleGrantedBeforeRetractions(t, srv, pgtest.Database(pool.Config().ConnString()))
	// A device sent before each device had its role (a database set up
	// before retractions is older than that): any writing role writes it.
	if _, err := pool.Exec(context.Background(), "UPDATE agentmap.devices SET owner_role = NULL"); err != nil {
		t.Fatal(err)
	}
	drainAsOldRole := func(batch int) state.OutboxStats {
		t.Helper()
		old, err := NewSender(db.Outbox(Name), maps, Config{URL: oldRole, Batch: batch}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer old.Close()
		// Not a failure to reach the database: no back-off.
		if err := old.Drain(context.Background()); err != nil {
			t.Fatalf("drain as a role without DELETE on the sessions: %v", err)
		}
		st, _ := db.Outbox(Name).Stats()
		if st.Len != 1 || st.Oldest == nil || st.Oldest.Key != "x/"+fixtures[0] || !st.Oldest.Retract ||
			!strings.Contains(st.State.LastError, "grant DELETE ON agentmap.sessions") {
			t.Fatalf("after a drain that refused its retraction: %+v", st)
		}
		return st
	}
	// A map queued behind the retraction goes in the same drain, one
	// entry a batch.
	requeueMap(fixtures[1], 2)
	drainAsOldRole(1)
	// Failures from an outage just before end once the database is
	// reached, though the retraction sharing a batch with a map is
	// refused.
	ob := db.Outbox(Name)
	was, _ := ob.State()
	was.Failures, was.LastError = 3, "connection refused"
	if err := ob.PutState(was); err != nil {
		t.Fatal(err)
	}
	requeueMap(fixtures[2], 3)
	if st := drainAsOldRole(2); st.State.Failures != 0 {
		t.Fatalf("failures after the database was reached: %d", st.State.Failures)
	}
	if err := admin.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st, _ := db.Outbox(Name).Stats(); st.Len != 0 || st.State.Retracted != 1 {
		t.Fatalf("after the drain with the grant: %+v", st)
	}
}

// drainedFixtures stores the fixtures' maps and sends them all to a new
// database through a sender, which it returns for more.
func drainedFixtures(t *testing.T) (*pgtest.Server, *pgxpool.Pool, *state.DB, string, *Sender) {
	t.Helper()
	srv, pool := newDB(t)
	db, maps := storeFixtures(t, false)
	s, err := NewSender(db.Outbox(Name), maps, Config{URL: pool.Config().ConnString()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	return srv, pool, db, maps, s
}

// TestSinkCountsEachSessionOnce: what the sink says it sent is the
// sessions the database holds from this device, each once: a new version
// of a session sent again, and `agentmap sink resend` writing every
// session again, leave the count as it was; a session removed from the
// database (privacy.exclude) leaves it.
func TestSinkCountsEachSessionOnce(t *testing.T) {
	_, pool, db, maps, s := drainedFixtures(t)
	ctx := context.Background()
	ob := db.Outbox(Name)
	check := func(when string, want int) {
		t.Helper()
		if err := s.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		st, err := ob.Stats()
		if err != nil {
			t.Fatal(err)
		}
		held := count(t, pool, "SELECT count(*) FROM agentmap.sessions WHERE device_id = $1", st.State.DeviceID)
		if st.Sent != want || held != int64(want) || st.Len != 0 {
			t.Fatalf("%s: %d sessions sent, the database holds %d of this device, want %d (queue %d)", when, st.Sent, held, want, st.Len)
		}
	}
	check("after the first drain", len(fixtures))

	// A new version of a session is flushed and stored in place of the
	// one held: still one session.
	f := fixtures[1]
	later := withMoreTokens(t, fixture(t, f), 100)
	if err := os.WriteFile(filepath.Join(maps, f+".json"), later.Canonical, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(later.Canonical)
	if err := db.PutSessions(&state.Session{Key: "x/" + f, Agent: "x", NativeID: f, Gen: 2,
		Flush: &state.Flush{Path: f + ".json", SHA256: hex.EncodeToString(sum[:]), Gen: 2, AtMs: time.Now().UnixMilli()}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := ob.Stats(); st.Len != 1 {
		t.Fatalf("the new version is not queued: %+v", st)
	}
	check("after a new version of a session", len(fixtures))
	if n := count(t, pool, "SELECT tokens FROM agentmap.sessions WHERE session_id = $1", later.Map.Session.ID); n != later.Map.Totals.Tokens {
		t.Fatalf("the database holds %d tokens of the session, not its new version's %d", n, later.Map.Totals.Tokens)
	}

	// `agentmap sink resend`: every session written again.
	if _, err := ob.Resend(time.Now()); err != nil {
		t.Fatal(err)
	}
	check("after a resend", len(fixtures))

	// privacy.exclude covers a session: its rows go, and it no longer counts.
	if err := db.Forget(state.Forgotten{Session: "x/" + fixtures[0]}); err != nil {
		t.Fatal(err)
	}
	check("after a retraction", len(fixtures)-1)
}
