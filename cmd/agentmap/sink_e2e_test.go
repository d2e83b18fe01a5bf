package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// sinkSession is a synthetic Claude session of the daemon tests.
func sinkSession(i int) string { return fmt.Sprintf("5a1e0000-0000-4000-8000-%012d", i) }

func (h *opsHome) claudeLog(i int) string {
	return h.path(".claude/projects/-w-app/" + sinkSession(i) + ".jsonl")
}

// sinkDaemonHome is the real binary, a server of the test's own with an
// empty database, and a home with one machine's config sending to it.
func sinkDaemonHome(t *testing.T, device, sink string) (string, *pgtest.Server, string, *opsHome, *machine) {
	t.Helper()
	bin := opsBinary(t, t.TempDir())
	srv := pgtest.New(t)
	db := pgtest.Database(srv.NewDatabase(t))
	t.Setenv(passwordEnv, srv.Password())
	h := newOpsHome(t, bin)
	h.env = append(h.env, passwordEnv+"="+srv.Password())
	return bin, srv, db, h, newMachine(t, srv, db, device, "", sink)
}

// sinkWait bounds the waits of these tests: the sender backs off (seconds)
// while the server is down.
const sinkWait = 90 * time.Second

// TestSinkServerStoppedWhileFlushing: the team database goes down while the
// daemon flushes new and grown sessions; they wait in the queue (status
// says so) and arrive once it is back, each once, grown ones in their new
// version.
func TestSinkServerStoppedWhileFlushing(t *testing.T) {
	bin, srv, db, h, m := sinkDaemonHome(t, "dev-one", "")
	cwd := h.path("w/app")
	for i := range 5 {
		appendFile(t, h.claudeLog(i), claudeTurn(sinkSession(i), cwd, 1))
	}
	var log lockedBuffer
	d := exec.Command(bin, "run", "--config", m.config, "--root", "claude="+h.path(".claude"))
	d.Env, d.Stdout, d.Stderr = h.env, &log, &log
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { d.Process.Signal(syscall.SIGTERM); d.Wait() }()
	pool := openTeam(t, srv, db)
	rows := func() int {
		var n int
		if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM agentmap.sessions").Scan(&n); err != nil {
			return -1
		}
		return n
	}
	flushAll := func() { h.run("flush", "--all", "--data-dir", m.dataDir) }
	waitUntil(t, sinkWait, "the first 5 sessions in the team database", &log, func() bool { flushAll(); return rows() == 5 })

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 10; i++ {
		appendFile(t, h.claudeLog(i), claudeTurn(sinkSession(i), cwd, 1))
	}
	for _, i := range []int{0, 3} {
		appendFile(t, h.claudeLog(i), claudeTurn(sinkSession(i), cwd, 2))
	}
	waitUntil(t, sinkWait, "7 sessions queued while the server is down", &log, func() bool {
		flushAll()
		st := m.deviceID(t)
		return st.Queue == 7 && st.LastError != "" && st.Oldest != nil
	})
	code, out, _ := h.run("sink", "status", "--data-dir", m.dataDir)
	t.Logf("sink status while the server is down:\n%s", out)
	if code != exitOK || !strings.Contains(out, "7 queued") || !strings.Contains(out, "error:") || !strings.Contains(out, "oldest:") {
		t.Fatalf("sink status does not show the queue and the error:\n%s", out)
	}
	if _, status, _ := h.run("status", "--data-dir", m.dataDir); !strings.Contains(status, "7 queued") {
		t.Fatalf("status does not show the team database's queue:\n%s", status)
	}
	_, shown, _ := h.run("config", "show", "--config", m.config)
	if strings.Contains(log.String()+out+shown, srv.Password()) || !strings.Contains(shown, "[sink.postgres]") {
		t.Fatalf("the password shows in the daemon's log, sink status or config show:\n%s", shown)
	}
	pool.Reset()

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, sinkWait, "the queue to drain after the server is back", &log, func() bool {
		st := m.deviceID(t)
		return st.Queue == 0 && st.LastError == ""
	})
	if n := rows(); n != 10 {
		t.Fatalf("%d sessions in the team database, want 10", n)
	}
	checkTeamEqualsLocal(t, pool, []*machine{m})
	// The grown sessions are one row each, in their new version (two turns).
	var calls int
	if err := pool.QueryRow(context.Background(), "SELECT sum(calls) FROM agentmap.sessions WHERE session_id LIKE '%' || $1",
		sinkSession(3)).Scan(&calls); err != nil || calls != 2 {
		t.Fatalf("grown session: %d calls (%v), want its new version's 2", calls, err)
	}
}

// TestSinkSurvivesKills SIGKILLs `scan` at random moments while it sends
// (after the database took at least one of its batches), with sessions
// growing between runs: in the end the team database equals the local
// store, each session once in its latest version.
func TestSinkSurvivesKills(t *testing.T) {
	bin, srv, db, h, m := sinkDaemonHome(t, "dev-kill", "batch = 3\n")
	cwd := h.path("w/app")
	const sessions = 120
	turns := make([]int, sessions)
	for i := range sessions {
		turns[i] = 1
		appendFile(t, h.claudeLog(i), claudeTurn(sinkSession(i), cwd, 1))
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	pool := openTeam(t, srv, db)
	scan := func() *exec.Cmd {
		c := exec.Command(bin, "scan", "--config", m.config, "--root", "claude="+h.path(".claude"))
		c.Env = h.env
		return c
	}
	kills, rounds, midQueue := 0, 0, 0
	for kills < 35 {
		rounds++
		if rounds > 400 {
			t.Fatalf("only %d kills landed in %d rounds", kills, rounds)
		}
		// New versions of a random third of the sessions.
		for range sessions / 3 {
			i := rng.IntN(sessions)
			turns[i]++
			appendFile(t, h.claudeLog(i), claudeTurn(sinkSession(i), cwd, turns[i]%60))
		}
		var started time.Time
		pool.QueryRow(context.Background(), "SELECT now()").Scan(&started)
		c := scan()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		killed := false
	poll:
		for {
			select {
			case <-done:
				break poll
			case <-time.After(3 * time.Millisecond):
			}
			var n int
			pool.QueryRow(context.Background(), "SELECT count(*) FROM agentmap.sessions WHERE received_at >= $1", started).Scan(&n)
			if n > 0 {
				time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
				if c.Process.Signal(syscall.SIGKILL) == nil {
					killed = true
				}
				<-done
				break
			}
		}
		if killed {
			kills++
			if st := m.deviceID(t); st.Queue > 0 {
				midQueue++
			}
		}
	}
	t.Logf("%d kills in %d rounds, %d of them with sessions still queued", kills, rounds, midQueue)
	if midQueue < kills/3 {
		t.Errorf("only %d of %d kills cut a send short", midQueue, kills)
	}
	if out, err := scan().CombinedOutput(); err != nil {
		t.Fatalf("final scan: %v\n%s", err, out)
	}
	if st := m.deviceID(t); st.Queue != 0 || st.LastError != "" {
		t.Fatalf("after the final scan: %+v", st)
	}
	checkTeamEqualsLocal(t, pool, []*machine{m})
}
