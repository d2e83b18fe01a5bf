//go:build unix

package daemon

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// storeWithHotJournal writes at path a Cursor-shaped store beside the
// journal of a write that never finished, as a writer killed mid-commit
// leaves it: a read-only reader may not roll it back, so every read fails
// until the agent opens the store again. from is the store to start from
// ("" for a small one made here).
func storeWithHotJournal(t *testing.T, from, path string) {
	t.Helper()
	work := filepath.Join(t.TempDir(), filepath.Base(path))
	if from != "" {
		copyOver(t, from, work)
	}
	db, err := sql.Open("sqlite", "file:"+work+"?_pragma=journal_mode(delete)&_pragma=cache_size(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200)
		INSERT INTO cursorDiskKV SELECT 'filler:' || i, randomblob(4000) FROM n`); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	copyOver(t, work, path)
	copyOver(t, work+"-journal", path+"-journal")
}

func copyOver(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// A store that stays unreadable is tried again further and further apart,
// up to the cap unreadable logs have, and its failure is logged once per
// step of that back-off, not at every try.
func TestUnreadableDatabaseBacksOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "globalStorage", "state.vscdb")
	storeWithHotJournal(t, "", path)
	clock := watchers.NewManualClock(time.Now().Truncate(time.Second))
	var logs syncBuffer
	d := New(Options{DataDir: t.TempDir(), Clock: clock,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	s := &state.Source{Path: path, Agent: "cursor", Form: watchers.FormSQLite}
	d.byPath[path] = s
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d.poll(ctx, s, watchers.FileStat{Path: path, Agent: "cursor", Form: watchers.FormSQLite, Size: fi.Size(), ModTime: fi.ModTime()})
	var waits []time.Duration
	for range 12 {
		at, ok := d.polls[path]
		if !ok {
			t.Fatalf("no further try scheduled after %v", waits)
		}
		waits = append(waits, at.Sub(clock.Now()))
		clock.Advance(at.Sub(clock.Now()))
		d.pollRetries(ctx)
	}
	var want []time.Duration
	for _, s := range []int{5, 10, 20, 40, 80, 120, 120, 120, 120, 120, 120, 120} {
		want = append(want, time.Duration(s)*time.Second)
	}
	if !slices.Equal(waits, want) {
		t.Fatalf("waits between tries: %v, want %v", waits, want)
	}
	if n := logs.count("level=WARN"); n != 6 {
		t.Errorf("%d warnings over 13 failed tries, want one per step of the back-off (6):\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), `reason="left mid-write by a stopped writer (hot journal)"`) {
		t.Errorf("the log does not say why the store cannot be read:\n%s", logs.String())
	}
	d.publishNow()
	u := d.snap.status.UnreadableDBs
	if u == nil || u.Count != 1 || u.Reason != "left mid-write by a stopped writer (hot journal)" || !u.RetryAt.Equal(d.polls[path]) {
		t.Fatalf("status of the unreadable store: %+v", u)
	}
}

// A following daemon counts a store it cannot read in status, a scan it
// is asked for fails naming it, and once the store can be read again it
// is read and leaves the count.
func TestUnreadableDatabaseInStatusAndScan(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	good := filepath.Join("..", "watchers", "opencode", "testdata", "opencode-1.18.33.db")
	path := filepath.Join(home, ".local", "share", "opencode", "opencode.db")
	storeWithHotJournal(t, good, path)
	p := startDaemon(t, bin, home, data)
	defer p.stop(t)
	st := settledStatus(t, bin, home, data, func(st Status) bool { return st.UnreadableDBs != nil })
	if u := st.UnreadableDBs; u == nil || u.Count != 1 || !strings.Contains(u.Reason, "hot journal") || u.RetryAt.IsZero() {
		t.Fatalf("status does not count the unreadable store: %+v\n%s", u, p.log)
	}
	cmd := exec.Command(bin, "scan", "--data-dir", data)
	cmd.Env = testEnv(home)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "scan: done by the daemon, with errors") ||
		!strings.Contains(string(out), "agentmap scan: 1 database could not be read (see the daemon's log); the daemon tries it again on a schedule") {
		t.Fatalf("scan through the daemon: %v\n%s", err, out)
	}
	// The agent opens its store again, rolling the write back.
	os.Remove(path + "-journal")
	copyOver(t, good, path)
	st = settledStatus(t, bin, home, data, func(st Status) bool {
		return st.UnreadableDBs == nil && st.Agents != nil && sessionsOf(st, "opencode") > 0
	})
	if st.UnreadableDBs != nil || sessionsOf(st, "opencode") == 0 {
		t.Fatalf("the store readable again is not read: %+v %+v\n%s", st.UnreadableDBs, st.Agents, p.log)
	}
}

func sessionsOf(st Status, agent string) int {
	for _, a := range st.Agents {
		if a.Agent == agent {
			return a.Live + a.Flushed
		}
	}
	return 0
}
