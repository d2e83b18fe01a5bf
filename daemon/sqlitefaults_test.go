//go:build unix

package daemon

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
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
	"github.com/agentmap/agentmap/watchers/agents"
	"github.com/agentmap/agentmap/watchers/cursor"
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

// readsCounted reads stores through the Cursor reader, counting the
// reads, and fails them while fail says why.
type readsCounted struct {
	reads map[string]int
	fail  map[string]error
}

func countReads(d *Daemon, agent string) *readsCounted {
	r := &readsCounted{reads: map[string]int{}, fail: map[string]error{}}
	d.agents[agent] = agents.Agent{Name: agent, Tool: agent,
		ReadDB: func(ctx context.Context, path string) ([]watchers.Conversation, error) {
			r.reads[path]++
			if err := r.fail[path]; err != nil {
				return nil, err
			}
			return nil, nil
		}}
	return r
}

// lockedErr is how the Cursor reader reports a store its writer holds:
// its ErrBusy, with SQLite's words beside it.
var lockedErr = fmt.Errorf("cursor: read cursorDiskKV: %w (database is locked (5) (SQLITE_BUSY))", cursor.ErrBusy)

// openStateOf opens a state database for a daemon run in the test's hands.
func openStateOf(t *testing.T, d *Daemon) {
	t.Helper()
	db, err := state.Open(filepath.Join(d.opt.DataDir, "state.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d.db = db
}

func statOf(t *testing.T, path, agent string) watchers.FileStat {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return watchers.FileStat{Path: path, Agent: agent, Form: watchers.FormSQLite, Size: fi.Size(), ModTime: fi.ModTime()}
}

// A store that failed and is readable again with the size and time of its
// last good read (a lock let go of, the file put back with its time by
// touch -r, cp -p or rsync) is read at its next try and leaves the retry
// schedule: it is not counted for good, and the loop is not woken for it
// over and over.
func TestDatabaseBackWithItsDigestIsReadAgain(t *testing.T) {
	path, clock, d, r := storeUnderTest(t)
	s := &state.Source{Path: path, Agent: "cursor", Form: watchers.FormSQLite}
	d.byPath[path] = s
	ctx := context.Background()
	good := statOf(t, path, "cursor")
	d.poll(ctx, s, good)
	// Written while its writer holds it: the read fails.
	later := good.ModTime.Add(time.Minute)
	os.Chtimes(path, later, later)
	r.fail[path] = lockedErr
	d.poll(ctx, s, statOf(t, path, "cursor"))
	if d.badDBs[path] == nil || !d.badDBs[path].transient {
		t.Fatalf("the locked store is not counted as locked: %+v", d.badDBs[path])
	}
	// Let go of, and put back with its time.
	os.Chtimes(path, good.ModTime, good.ModTime)
	delete(r.fail, path)
	clock.Advance(sqliteRetry)
	wakes := 0
	for range 20 {
		now := clock.Now()
		if next, ok := d.nextDue(now); ok && !next.After(now) {
			wakes++
		}
		d.pollRetries(ctx)
	}
	if r.reads[path] != 3 {
		t.Errorf("%d reads, want 3 (the good one, the failed one, the retry)", r.reads[path])
	}
	if len(d.badDBs) != 0 || len(d.polls) != 0 {
		t.Errorf("the store read again is still counted: %v %v", d.badDBs, d.polls)
	}
	if wakes > 1 {
		t.Errorf("the loop was woken at once %d times in a row", wakes)
	}
	// A try left for a store no longer counted does not wake the loop.
	d.polls[path] = clock.Now().Add(-time.Second)
	if next, ok := d.nextDue(clock.Now()); ok {
		t.Errorf("woken at %v for a try of a store that is not unreadable", next)
	}
	if len(d.polls) != 0 {
		t.Errorf("the try is kept: %v", d.polls)
	}
}

// A store cut short reads as damaged, not locked: the daemon tries it
// again on its schedule (one being rewritten looks so for a moment), but a
// one-shot scan does not wait for it.
func TestDamagedDatabaseIsNotWaitedFor(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "globalStorage", "state.vscdb")
	os.MkdirAll(filepath.Dir(path), 0o700)
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(delete)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
		CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200)
		INSERT INTO cursorDiskKV SELECT 'composerData:' || i, randomblob(4000) FROM n`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Truncate(path, 400000); err != nil {
		t.Fatal(err)
	}
	clock := watchers.NewManualClock(time.Now().Truncate(time.Second))
	var logs syncBuffer
	d := New(Options{DataDir: t.TempDir(), Clock: clock, Once: true,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	s := &state.Source{Path: path, Agent: "cursor", Form: watchers.FormSQLite}
	d.byPath[path] = s
	ctx := context.Background()
	d.poll(ctx, s, statOf(t, path, "cursor"))
	u := d.badDBs[path]
	if u == nil || u.err != "damaged or changing (read error)" || u.transient || d.lockedDBs() {
		t.Fatalf("the store cut short: %+v\n%s", u, logs.String())
	}
	if _, ok := d.polls[path]; !ok {
		t.Fatal("the damaged store is not tried again")
	}
	waited := make(chan struct{})
	go func() { d.waitForLockedDBs(ctx); close(waited) }()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("the one-shot scan waits for a damaged store")
	}
}

// A one-shot scan's wait for a locked store reads again that store only:
// one that failed otherwise is not read, nor logged, again.
func TestScanWaitRetriesLockedDatabasesOnly(t *testing.T) {
	dir := t.TempDir()
	locked, denied := filepath.Join(dir, "a", "state.vscdb"), filepath.Join(dir, "b", "state.vscdb")
	clock := watchers.NewManualClock(time.Now().Truncate(time.Second))
	var logs syncBuffer
	d := New(Options{DataDir: t.TempDir(), Clock: clock, Once: true,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	r := countReads(d, "cursor")
	r.fail[locked] = lockedErr
	r.fail[denied] = fmt.Errorf("cursor: open database: %w", fs.ErrPermission)
	ctx := context.Background()
	for _, p := range []string{locked, denied} {
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("store"), 0o600)
		s := &state.Source{Path: p, Agent: "cursor", Form: watchers.FormSQLite}
		d.byPath[p] = s
		d.poll(ctx, s, statOf(t, p, "cursor"))
	}
	if u := d.badDBs[denied]; u == nil || u.transient || u.err != "permission denied" {
		t.Fatalf("the store that may not be read: %+v", u)
	}
	waited := make(chan struct{})
	go func() { d.waitForLockedDBs(ctx); close(waited) }()
	for done := false; !done; {
		select {
		case <-waited:
			done = true
		case <-time.After(time.Millisecond):
			clock.Advance(time.Second)
		}
	}
	if r.reads[locked] != 4 || r.reads[denied] != 1 {
		t.Errorf("reads: %d of the locked store (want 4), %d of the other (want 1)", r.reads[locked], r.reads[denied])
	}
	if n := strings.Count(logs.String(), "path="+denied); n != 1 {
		t.Errorf("the store that may not be read is logged %d times, want 1:\n%s", n, logs.String())
	}
}

// A store deleted while it is tried again leaves the count: a scan done by
// the daemon does not fail for it, and it is no longer tried.
func TestDeletedDatabaseLeavesTheCount(t *testing.T) {
	path, _, d, r := storeUnderTest(t)
	r.fail[path] = lockedErr
	s := &state.Source{Path: path, Agent: "cursor", Form: watchers.FormSQLite}
	d.byPath[path] = s
	d.poll(context.Background(), s, statOf(t, path, "cursor"))
	if d.unreadableDBCount() != 1 {
		t.Fatalf("the locked store is not counted: %v", d.badDBs)
	}
	os.Remove(path)
	// Before the watcher reports it gone: a scan's count leaves it out.
	if n := d.unreadableDBCount(); n != 0 {
		t.Errorf("a store deleted is counted unreadable: %d", n)
	}
	d.gone(path)
	if len(d.badDBs) != 0 || len(d.polls) != 0 {
		t.Errorf("a store gone is still tried again: %v %v", d.badDBs, d.polls)
	}
	if err := d.unreadableDBError(); err != nil {
		t.Errorf("a scan fails for a store gone: %v", err)
	}
	// Kept out by privacy.exclude: its record is dropped, and its tries.
	os.WriteFile(path, []byte("store"), 0o600)
	s = &state.Source{ID: 2, Path: path, Agent: "cursor", Form: watchers.FormSQLite}
	d.srcs[s.ID], d.byPath[path] = s, s
	d.poll(context.Background(), s, statOf(t, path, "cursor"))
	if len(d.badDBs) != 1 {
		t.Fatalf("the locked store is not counted: %v", d.badDBs)
	}
	d.keepOut([]*state.Source{s})
	if len(d.badDBs) != 0 || len(d.polls) != 0 {
		t.Errorf("a store kept out is still tried again: %v %v", d.badDBs, d.polls)
	}
}

// A database deleted and then there again is followed as present: deleted
// a second time, it is seen gone again, and its retries stop.
func TestDatabaseBackAfterItsDeletion(t *testing.T) {
	path, clock, d, r := storeUnderTest(t)
	s := &state.Source{ID: 1, Path: path, Agent: "cursor", Form: watchers.FormSQLite}
	d.srcs[s.ID], d.byPath[path] = s, s
	os.Remove(path)
	d.gone(path)
	if !s.Missing {
		t.Fatal("a database deleted is not marked missing")
	}
	os.WriteFile(path, []byte("store, again"), 0o600)
	d.visit(context.Background(), statOf(t, path, "cursor"))
	if s.Missing || r.reads[path] != 1 {
		t.Fatalf("a database back on disk: missing %v, %d reads; want present and read", s.Missing, r.reads[path])
	}
	r.fail[path] = lockedErr
	clock.Advance(time.Second)
	os.WriteFile(path, []byte("store, once more"), 0o600)
	d.visit(context.Background(), statOf(t, path, "cursor"))
	if len(d.badDBs) != 1 {
		t.Fatalf("the locked store is not counted: %v", d.badDBs)
	}
	os.Remove(path)
	d.gone(path)
	if !s.Missing || len(d.badDBs) != 0 || len(d.polls) != 0 {
		t.Errorf("deleted a second time: missing %v, still tried %v %v", s.Missing, d.badDBs, d.polls)
	}
}

// storeUnderTest is a daemon in the test's hands, on a manual clock with
// its state open, whose Cursor reader counts its reads (and fails them as
// told), and the path of a Cursor store beside it (not a real database:
// the reader never opens it).
func storeUnderTest(t *testing.T) (string, *watchers.ManualClock, *Daemon, *readsCounted) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "globalStorage", "state.vscdb")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte("store"), 0o600)
	clock := watchers.NewManualClock(time.Now().Truncate(time.Second))
	d := New(Options{DataDir: t.TempDir(), Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	openStateOf(t, d)
	return path, clock, d, countReads(d, "cursor")
}
