package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/watchers/agents"
)

// A daemon that follows, started again over a data directory that caught
// up before, lets go of the quiet sessions as it loads them instead of
// holding every record until its first look at them (the peak of its
// start at 100,000 sessions), one with a deleted log too. Logs changed
// between the load and its watcher's first look (one appended to, one
// deleted, one moved to another name, a deleted one written back) have
// their sessions taken up again, and the daemon ends with
// the maps, records and status of one that keeps every session. A session
// active within RetireAfter is not let go of on load.
func TestFollowingDaemonLetsGoOfQuietSessionsOnLoad(t *testing.T) {
	const sessions = 7
	first := oneLogSessions(sessions)
	changes := []step{
		{kind: appendLines, path: "-w-app/q0.jsonl", content: line("q0", "call")},
		{kind: deleteLog, path: "-w-app/q1.jsonl"},
		{kind: moveLog, path: "-w-app/q2.jsonl", to: "-w-app/q2-moved.jsonl"},
		{kind: createLog, path: "-w-app/q6.jsonl", content: first[6].content + line("q6", "call")},
	}
	play := func(name string, retireAfter time.Duration) (end string, loaded, restored int) {
		h := caughtUpHome(t, name, retireAfter, first)
		// One log deleted while the daemon ran: its record is of a log gone.
		h.apply(step{kind: deleteLog, path: "-w-app/q6.jsonl"})
		h.f.goneFrom("q6", "q6.jsonl")
		h.f.waitFiles(sessions-1, "the deleted log no longer counted")
		h.restartChanging(changes)
		h.f.waitMap("q0", fakeMap(map[string][]string{"": {"user", "call", "call"}}))
		h.f.goneFrom("q1", "q1.jsonl")
		h.f.followedAt("q2", "q2-moved.jsonl")
		h.f.followedAt("q6", "q6.jsonl")
		h.f.waitFiles(sessions-1, "the deleted log no longer counted, the one back counted") // the status published after the sweep
		d := h.f.d
		end = h.finish()
		return end, d.retiredOnLoad, d.restored
	}
	kept, keptLoaded, _ := play("keeps all", -1)
	retiring, loaded, restored := play("lets go", time.Nanosecond)
	recent, recentLoaded, _ := play("lets go after an hour", time.Hour)
	if keptLoaded != 0 || recentLoaded != 0 {
		t.Errorf("let go of as they were loaded: %d sessions by the daemon that keeps every session, %d by the one that lets go of those quiet for an hour, want none",
			keptLoaded, recentLoaded)
	}
	if recent != kept {
		t.Errorf("the daemon that lets go after an hour ended with\n%s\nthe one that keeps all with\n%s", recent, kept)
	}
	if loaded != sessions {
		t.Errorf("%d sessions let go of as they were loaded, want the %d whose logs were quiet or deleted", loaded, sessions)
	}
	if restored != 4 {
		t.Errorf("%d sessions taken up again, want the 4 let go of whose logs changed after the load", restored)
	}
	endedAlike(t, kept, retiring)
}

// Sessions let go of on load whose paths another retired session holds
// (every path's hash alike) are taken up again once the load is done,
// their logs' sizes read from the disk then; logs deleted after that and
// before the watcher's first look must still be seen gone by the sweep
// that ends it, which trusts only the sizes the watcher reported.
func TestQuietLogsDeletedBeforeTheFirstScanOfSessionsTakenUpAtLoad(t *testing.T) {
	defer func(p func(string) uint64) { retiredPathHash = p }(retiredPathHash)
	retiredPathHash = func(string) uint64 { return 7 }
	const sessions = 3
	first := oneLogSessions(sessions)
	var changes []step
	for _, s := range first {
		changes = append(changes, step{kind: deleteLog, path: s.path})
	}
	h := caughtUpHome(t, "lets go", time.Nanosecond, first)
	h.restartChanging(changes)
	h.f.waitFiles(0, "every log deleted no longer counted")
	for i := range sessions {
		h.f.goneFrom(fmt.Sprintf("q%d", i), fmt.Sprintf("q%d.jsonl", i))
	}
	if d := h.f.d; d.retiredOnLoad != sessions || d.restored != sessions {
		t.Errorf("%d sessions let go of on load and %d taken up again, want %d and %d", d.retiredOnLoad, d.restored, sessions, sessions)
	}
	h.f.stop()
}

// A log moved onto the name of another followed log (whose record is then
// of a deleted log, the newer of the two records of that path) is read
// again by no record after a restart: the session of the moved log, let
// go of on load, is taken up at the end of the load and its log takes
// the path, a present log's record beating a deleted one's.
func TestLogMovedOntoAnotherFollowedLogAcrossARestart(t *testing.T) {
	first := []step{
		{kind: createLog, path: "-w-app/a.jsonl", content: line("y", "user") + line("y", "call")},
		{kind: createLog, path: "-w-app/b.jsonl", content: line("x", "user") + line("x", "call")},
	}
	play := func(name string, retireAfter time.Duration) (end string, loaded int) {
		h := caughtUpHome(t, name, retireAfter, first)
		h.apply(step{kind: moveLog, path: "-w-app/a.jsonl", to: "-w-app/b.jsonl"})
		h.f.followedAt("y", "b.jsonl")
		h.f.waitFiles(1, "the log moved onto the other's name counted once")
		h.restartChanging(nil)
		h.f.waitFiles(1, "the log moved counted once after the restart")
		// The deleted log's record, taken up at the end of the load,
		// holds the path until news of it: the log, as it was, is left
		// out of the catch-up, not counted as a whole log to read.
		st, err := h.f.client().Status(context.Background())
		for deadline := time.Now().Add(15 * time.Second); err == nil && st.CatchUp.Running && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			st, err = h.f.client().Status(context.Background())
		}
		if err != nil || st.CatchUp.Running || st.CatchUp.Done != st.CatchUp.Total {
			t.Errorf("%s: catch-up %+v after the restart (%v), want it done", name, st.CatchUp, err)
		}
		d := h.f.d
		end = h.finish()
		return end, d.retiredOnLoad
	}
	kept, _ := play("keeps all", -1)
	retiring, loaded := play("lets go", time.Nanosecond)
	if loaded != 2 {
		t.Errorf("%d sessions let go of as they were loaded, want 2 (the moved log's and the deleted one's)", loaded)
	}
	endedAlike(t, kept, retiring)
}

// A session's subagent log moved onto the name of its main log leaves
// the session two records of one path, the newer of a deleted log. Let go
// of on load after a restart, then taken up again by a command, the
// session gives the path to its present log's record, as a load does
// (takesPathFrom), not to the newer record: the line appended next is
// read once, by the moved log's record.
func TestOwnLogMovedOntoItsMainLogAcrossARestart(t *testing.T) {
	// The subagent log is met first, so that the main log's record is
	// the newer: the one a path goes to when the two tie.
	first := []step{{kind: createLog, path: "-w-app/x/subagents/agent-a.jsonl", content: line("x", "user") + line("x", "call")}}
	play := func(name string, retireAfter time.Duration) (end string, loaded, restored int) {
		h := startHome(t, name, retireAfter, first)
		h.f.waitMap("x", fakeMap(map[string][]string{"sa-a": {"user", "call"}}))
		h.apply(step{kind: createLog, path: "-w-app/x.jsonl", content: line("x", "user") + line("x", "llm")})
		h.f.waitMap("x", fakeMap(map[string][]string{"": {"user", "llm"}, "sa-a": {"user", "call"}}))
		h.f.status("caught up")
		h.apply(step{kind: moveLog, path: "-w-app/x/subagents/agent-a.jsonl", to: "-w-app/x.jsonl"})
		h.f.waitFiles(1, "the subagent log moved onto the main log's name counted once")
		h.f.status("settled")
		// The session taken up again by a command once the restart let it
		// go of, then its main log appended to.
		h.restartChanging(nil)
		h.command(step{kind: flushAll}) // takes every session up; writes none, all being up to date
		h.apply(step{kind: appendLines, path: "-w-app/x.jsonl", content: line("x", "llm")})
		// The moved log's lines, the appended one with them, then what
		// the deleted log gave.
		h.f.waitMap("x", fakeMap(map[string][]string{"": {"user", "call", "llm"}})+fakeMap(map[string][]string{"": {"user", "llm"}}))
		d := h.f.d
		end = h.finish()
		return end, d.retiredOnLoad, d.restored
	}
	kept, _, _ := play("keeps all", -1)
	// Whether the session is let go of on load, and taken up again once,
	// depends on when the rescan comes on a busy machine: every run must
	// end as the daemon that keeps all, and one of a few must have gone
	// the way under test.
	var loaded, restored int
	for try := 1; try <= 5; try++ {
		var retiring string
		retiring, loaded, restored = play(fmt.Sprintf("lets go, try %d", try), time.Nanosecond)
		endedAlike(t, kept, retiring)
		if loaded == 1 && restored == 1 {
			return
		}
	}
	t.Errorf("%d sessions let go of on load and %d taken up again, want 1 and 1", loaded, restored)
}

// endedAlike fails the test unless the daemon that lets go of sessions
// ended with the maps, records and status of the one that keeps them.
func endedAlike(t *testing.T, kept, retiring string) {
	t.Helper()
	if retiring != kept {
		t.Errorf("the daemon that lets go ended with\n%s\nthe one that keeps all with\n%s\ndiffering:\n%s",
			retiring, kept, differing(kept, retiring))
	}
}

// oneLogSessions is the first steps of a home of n sessions q0, q1, … of
// one log each.
func oneLogSessions(n int) []step {
	var first []step
	for i := range n {
		id := fmt.Sprintf("q%d", i)
		first = append(first, step{kind: createLog, path: "-w-app/" + id + ".jsonl", content: line(id, "user") + line(id, "call")})
	}
	return first
}

// caughtUpHome starts a home whose daemon lets go of sessions after
// retireAfter, and waits for every session's map to be written and
// recorded.
func caughtUpHome(t *testing.T, name string, retireAfter time.Duration, first []step) *home {
	t.Helper()
	h := startHome(t, name, retireAfter, first)
	for _, s := range first {
		id, _ := routeOf(s.content)
		h.f.waitMap(id, fakeMap(map[string][]string{"": {"user", "call"}}))
	}
	h.f.status("caught up") // every map's record committed
	return h
}

// restartChanging stops the home's daemon and starts another on its data
// directory, as a reboot or an upgrade does, making the changes, if any,
// between its load of the records and its watcher's first look at the
// logs (afterLoad).
func (h *home) restartChanging(changes []step) {
	h.t.Helper()
	h.f.stop()
	h.restored += h.f.d.restored
	var made chan struct{}
	if len(changes) > 0 {
		made = make(chan struct{})
		afterLoad = func() {
			for _, c := range changes {
				h.apply(c)
			}
			close(made)
		}
		defer func() { afterLoad = nil }()
	}
	h.f.d = New(h.opt)
	h.f.stop = follow(h.t, h.f.d)
	if made != nil {
		select {
		case <-made:
		case <-time.After(15 * time.Second):
			h.t.Fatal("the daemon started again did not reach its first look at the logs")
		}
	}
	h.f.client() // the control socket is served: the state database is open
}

// A Codex rollout deleted (its record marked so) whose compressed copy
// appears later, while the daemon runs or while it is down: the copy is
// read in the deleted record's place, and not a second time by a new
// record, whether the rollout's session was let go of (at a rescan, or as
// the restarted daemon loaded it) or kept.
func TestCompressedCopyOfARetiredDeletedRollout(t *testing.T) {
	for _, whileDown := range []bool{false, true} {
		name := "copy appears while the daemon runs"
		if whileDown {
			name = "copy appears while the daemon is down"
		}
		t.Run(name, func(t *testing.T) {
			kept := playCompressedCopy(t, -1, whileDown)
			retiring := playCompressedCopy(t, time.Nanosecond, whileDown)
			endedAlike(t, kept, retiring)
		})
	}
}

func playCompressedCopy(t *testing.T, retireAfter time.Duration, whileDown bool) string {
	r, dir := codexRig(t)
	r.idle = 30 * time.Millisecond
	opt := r.opts(false)
	opt.Agents = []agents.Agent{fakeAgentNamed("codex")}
	opt.Rescan, opt.RetireAfter, opt.Control = 30*time.Millisecond, retireAfter, true
	plain := filepath.Join(dir, "rollout-1-z.jsonl")
	content := line("z", "user") + line("z", "llm")
	for path, content := range map[string]string{plain: content, filepath.Join(dir, "rollout-2-k.jsonl"): line("k", "user")} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f := startFollowing(t, r, opt)
	defer f.stop()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("z's map", func() bool { return r.codexMap("z") == " session 1\n user 1\n llm 2\n" })
	f.status("caught up")
	// A second name keeps the file, so that no later file takes its
	// identity.
	if err := os.Link(plain, filepath.Join(r.home, "kept-z")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(plain); err != nil {
		t.Fatal(err)
	}
	f.waitFiles(1, "z's rollout seen gone")
	if retireAfter > 0 {
		f.waitRetired(2)
	}
	if whileDown {
		f.stop()
		writeCompressedCopy(t, plain, []byte(content+line("z", "turn_end")))
		f.restart()
	} else {
		writeCompressedCopy(t, plain, []byte(content+line("z", "turn_end")))
	}
	waitFor("the copy's last line in z's map", func() bool { return strings.Contains(r.codexMap("z"), "turn_end") })
	f.waitFiles(2, "the copy counted as z's log")
	f.status("at the end")
	f.stop()
	f.note("map z: %q", r.codexMap("z"))
	return f.summary()
}
