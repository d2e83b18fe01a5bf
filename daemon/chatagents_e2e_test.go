package daemon

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/agentmap/agentmap/watchers/opencode/storagetest"
	_ "modernc.org/sqlite"
)

// TestOpenCodeCopilotCrashEquivalence grows the logs the real OpenCode
// and Copilot CLI wrote (testdata of their packages) while the daemon
// follows them, SIGKILLs it at random moments, and checks that the maps
// it ends with are byte-identical to `agentmap build` of the finished
// logs. Copilot's events.jsonl is appended in chunks that split lines;
// OpenCode's store gets its message and part rows back a few at a time,
// in WAL mode as OpenCode writes it.
func TestOpenCodeCopilotCrashEquivalence(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))

	// Copilot: the recorded sessions, appended in random chunks.
	var feeds []*feed
	logs, _ := filepath.Glob(filepath.Join("..", "watchers", "copilot", "testdata", "*", "*", "events.jsonl"))
	if len(logs) == 0 {
		t.Fatal("no Copilot CLI logs in watchers/copilot/testdata")
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		id := filepath.Base(filepath.Dir(l))
		feeds = append(feeds, &feed{from: l, data: b,
			to: filepath.Join(home, ".copilot", "session-state", id, "events.jsonl")})
	}

	// OpenCode: the recorded store with its rows taken out, put back later.
	src := filepath.Join("..", "watchers", "opencode", "testdata", "opencode-1.18.33.db")
	dbPath := filepath.Join(home, ".local", "share", "opencode", "opencode.db")
	os.MkdirAll(filepath.Dir(dbPath), 0o700)
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dbPath, raw, 0o600)
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type row struct {
		table string
		vals  []any
	}
	var rows []row
	for _, q := range []struct{ table, sel string }{
		{"message", "SELECT id, session_id, time_created, time_updated, data FROM message ORDER BY time_created, id"},
		{"part", "SELECT id, message_id, session_id, time_created, time_updated, data FROM part ORDER BY id"},
	} {
		rs, err := db.Query(q.sel)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		for rs.Next() {
			v := make([]any, len(cols))
			p := make([]any, len(cols))
			for i := range v {
				p[i] = &v[i]
			}
			if err := rs.Scan(p...); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, row{q.table, v})
		}
		rs.Close()
	}
	// Parts before their message would break the foreign key: messages go
	// back first, in order, then parts, interleaved by time as OpenCode
	// writes them (a message row, then its parts).
	if _, err := db.Exec("DELETE FROM part"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DELETE FROM message"); err != nil {
		t.Fatal(err)
	}
	insert := func(r row) {
		q := "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)"
		if r.table == "part" {
			q = "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)"
		}
		if _, err := db.Exec(q, r.vals...); err != nil {
			t.Fatal(err)
		}
	}
	byMsg := map[any][]row{}
	var msgs []row
	for _, r := range rows {
		if r.table == "message" {
			msgs = append(msgs, r)
		} else {
			byMsg[r.vals[1]] = append(byMsg[r.vals[1]], r)
		}
	}
	var pending []row
	for _, m := range msgs {
		pending = append(pending, m)
		pending = append(pending, byMsg[m.vals[0]]...)
	}

	p := startDaemon(t, bin, home, data)
	kills := 0
	for step := 0; ; step++ {
		var open []*feed
		for _, f := range feeds {
			if f.written < len(f.data) {
				open = append(open, f)
			}
		}
		if len(open) == 0 && len(pending) == 0 {
			break
		}
		if len(open) > 0 && (len(pending) == 0 || rng.IntN(2) == 0) {
			open[rng.IntN(len(open))].write(t, 1+rng.IntN(6<<10))
		} else {
			n := min(len(pending), 1+rng.IntN(6))
			for _, r := range pending[:n] {
				insert(r)
			}
			pending = pending[n:]
		}
		if step%4 == 3 {
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
			p.kill()
			kills++
			p = startDaemon(t, bin, home, data)
		}
	}
	t.Logf("%d kills", kills)
	paths := []string{dbPath}
	for _, f := range feeds {
		paths = append(paths, f.to)
	}
	want := expected(t, bin, paths)
	if len(want) < len(feeds)+2 {
		t.Fatalf("agentmap build wrote %d maps, want %d Copilot and 2 OpenCode sessions", len(want), len(feeds))
	}
	waitStore(t, data, want, p)
	p.stop(t)
	t.Logf("%d maps identical to agentmap build (%d Copilot logs)", len(want), len(feeds))
}

// TestOpenCodeStorageCrashEquivalence lays the stores the real OpenCode
// wrote out as the JSON storage of its older versions, file by file in
// the order the files were made and last rewritten (storagetest), while
// the daemon follows the data directory and is SIGKILLed at random
// moments; its maps must be byte-identical to `agentmap build` of the
// finished session files.
func TestOpenCodeStorageCrashEquivalence(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	dir := filepath.Join(home, ".local", "share", "opencode")
	dbs, _ := filepath.Glob(filepath.Join("..", "watchers", "opencode", "testdata", "*.db"))
	var writes []storagetest.Write
	for _, db := range dbs {
		w, err := storagetest.Writes(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		writes = append(writes, w...)
	}
	sort.SliceStable(writes, func(i, j int) bool { return writes[i].At < writes[j].At })
	total := len(writes)
	if total < 100 {
		t.Fatalf("%d storage writes from %v: too few to show anything", total, dbs)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 13))
	sessions := map[string]string{}
	p := startDaemon(t, bin, home, data)
	kills := 0
	for len(writes) > 0 {
		n := min(len(writes), 1+rng.IntN(12))
		for _, w := range writes[:n] {
			to := filepath.Join(dir, filepath.FromSlash(w.Path))
			os.MkdirAll(filepath.Dir(to), 0o700)
			// In place, not renamed: OpenCode wrote its storage so, and a
			// read may catch a file half-written.
			if err := os.WriteFile(to, w.Data, 0o600); err != nil {
				t.Fatal(err)
			}
			if w.Session != "" {
				sessions[w.Session] = to
			}
		}
		writes = writes[n:]
		time.Sleep(time.Duration(rng.IntN(80)) * time.Millisecond)
		if rng.IntN(3) == 0 {
			p.kill()
			kills++
			p = startDaemon(t, bin, home, data)
		}
	}
	var paths []string
	for _, f := range sessions {
		paths = append(paths, f)
	}
	sort.Strings(paths)
	want := expected(t, bin, paths)
	if len(want) < 3 {
		t.Fatalf("agentmap build wrote %d maps of the storage, want the 3 root sessions", len(want))
	}
	waitStore(t, data, want, p)
	p.stop(t)
	if kills < 3 {
		t.Errorf("only %d kills", kills)
	}
	t.Logf("%d writes, %d kills; %d maps identical to agentmap build", total, kills, len(want))
}
