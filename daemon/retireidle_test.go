package daemon

import (
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// A following daemon lets go of the sessions it has nothing to do for,
// and takes each up again when one of its logs grows, is deleted or gets
// a new subagent log, or when a command acts on every session: it ends
// with the same maps, records and status as a daemon that keeps them all.
func TestFollowingDaemonLetsGoOfQuietSessions(t *testing.T) {
	defer func(n, w int) { compactMapsFrom, walkChunk = n, w }(compactMapsFrom, walkChunk)
	compactMapsFrom, walkChunk = 1, 2 // the maps rebuilt as sessions leave; the first scan read in pieces
	kept := followRetiring(t, -1)
	retiring := followRetiring(t, time.Nanosecond)
	if kept.retired != 0 {
		t.Fatalf("a daemon told never to let go retired %d sessions", kept.retired)
	}
	if retiring.restored < 4 {
		t.Errorf("%d sessions taken up again, want at least 4 (s1 grown, s3's new lane, s2 deleted, s1's child)", retiring.restored)
	}
	if retiring.summary != kept.summary {
		t.Errorf("retiring daemon ended with\n%s\nthe daemon that keeps all with\n%s", retiring.summary, kept.summary)
	}
}

type retiringRun struct {
	summary           string // maps, records and status along the way
	retired, restored int
}

func followRetiring(t *testing.T, retireAfter time.Duration) retiringRun {
	t.Helper()
	r, opt := quickRig(t, retireAfter)
	r.append("s1.jsonl", line("s1", "user"), line("s1", "llm"))
	r.append("s2.jsonl", line("s2", "user"))
	r.append("s3.jsonl", line("s3", "user"))
	r.append("s3/subagents/agent-x.jsonl", line("s3", "call"))
	r.append("s4.jsonl", line("s4", "user"), "not a line\n") // a skipped line: s4 stays in memory

	f := startFollowing(t, r, opt)
	defer f.stop()
	d, note, waitMap, waitRetired, client, status := f.d, f.note, f.waitMap, f.waitRetired, f.client, f.status
	waitMap("s1", fakeMap(map[string][]string{"": {"user", "llm"}}))
	waitMap("s2", fakeMap(map[string][]string{"": {"user"}}))
	waitMap("s3", fakeMap(map[string][]string{"": {"user"}, "sa-x": {"call"}}))
	waitMap("s4", fakeMap(map[string][]string{"": {"user"}}))
	waitRetired(3)
	status("all written")

	r.append("s1.jsonl", line("s1", "result"))
	waitMap("s1", fakeMap(map[string][]string{"": {"user", "llm", "result"}}))
	r.append("s3/subagents/agent-y.jsonl", line("s3", "call"))
	waitMap("s3", fakeMap(map[string][]string{"": {"user"}, "sa-x": {"call"}, "sa-y": {"call"}}))
	if err := os.Remove(filepath.Join(r.proj, "s2.jsonl")); err != nil {
		t.Fatal(err)
	}
	f.waitFiles(5, "s2's log not seen gone") // s1, s3 and its two lanes, s4; s2 gone
	waitRetired(3)                           // s1, s3 and s2 with its log gone (s4, with a skipped line, stays)
	// A child session of s1 (a Codex child rollout, say) takes s1 up
	// again: its map has the child as a lane.
	r.append("c1.jsonl", `{"s":"c1","p":"s1","k":"user"}`+"\n")
	waitMap("s1", fakeMap(map[string][]string{"": {"user", "llm", "result"}, "sa-c1": {"user"}}))
	waitRetired(2) // s2, s3; s1 has a child now
	status("after the changes")
	res, err := client().Flush(context.Background(), "", true)
	if err != nil {
		t.Fatal(err)
	}
	note("flush all: flushed %d current %d failed %d", len(res.Flushed), res.Current, len(res.Failed))
	if res, err = client().Flush(context.Background(), "s3", false); err != nil {
		t.Fatal(err)
	}
	note("flush s3: flushed %d current %d failed %d", len(res.Flushed), res.Current, len(res.Failed))
	// s2's log comes back, with a line more: its session, let go of with
	// its log gone, is taken up again by the path.
	s2map := r.mapOf("s2")
	r.append("s2.jsonl", line("s2", "user"), line("s2", "llm"))
	for until := time.Now().Add(15 * time.Second); r.mapOf("s2") == s2map; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(until) {
			t.Fatal("s2's log back under its name: map not written again")
		}
	}
	waitRetired(1)
	sr, err := client().Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	note("scan: files %d bytes %d sessions %d flushed %d current %d", sr.Files, sr.Bytes, sr.Sessions,
		len(sr.Flush.Flushed), sr.Flush.Current)
	f.stop()
	if retireAfter > 0 {
		if d.sessions["claude/s4"] == nil || d.keptInMemory["claude/s4"] == 0 {
			t.Errorf("s4, with a skipped line, not noted as kept in memory")
		}
	}
	sum := f.summary("s1", "s2", "s3", "s4", "c1")
	t.Log(sum)
	return retiringRun{summary: sum, retired: d.retired.len(), restored: d.restored}
}

// following is a following daemon under test, with what the test noted.
type following struct {
	t           *testing.T
	r           *rig
	d           *Daemon
	stop        func()
	retireAfter time.Duration
	retiredNow  <-chan int
	out         []string
	opt         Options
	current     func() // stops the daemon of now
}

func startFollowing(t *testing.T, r *rig, opt Options) *following {
	f := &following{t: t, r: r, retireAfter: opt.RetireAfter, retiredNow: watchRetired(t), opt: opt}
	f.d = New(opt)
	f.current = follow(t, f.d)
	// One stop for the daemon of now, also one restart started: a stop
	// deferred before a restart stops the daemon after it.
	f.stop = func() { f.current() }
	return f
}

// restart stops the daemon and starts another with the same options.
func (f *following) restart() {
	f.stop()
	f.d = New(f.opt)
	f.current = follow(f.t, f.d)
}

func (f *following) note(format string, a ...any) { f.out = append(f.out, fmt.Sprintf(format, a...)) }

// waitMap waits for a session's map to be want.
func (f *following) waitMap(id string, want string) {
	f.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for f.r.mapOf(id) != want {
		if time.Now().After(deadline) {
			f.t.Fatalf("map of %s:\n%s\nwant:\n%s", id, f.r.mapOf(id), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitRetired waits, when the daemon lets go of sessions, for a look at
// them after this call that leaves at least n retired.
func (f *following) waitRetired(n int) {
	f.t.Helper()
	if f.retireAfter < 0 {
		return
	}
	for len(f.retiredNow) > 0 {
		<-f.retiredNow // what rescans before the last change said
	}
	deadline := time.After(15 * time.Second)
	for {
		select {
		case got := <-f.retiredNow:
			if got >= n {
				return
			}
		case <-deadline:
			f.t.Fatalf("fewer than %d sessions let go of", n)
		}
	}
}

// waitFiles waits for status to count n followed files (what says which
// change that shows, when it does not come).
func (f *following) waitFiles(n int, what string) {
	f.t.Helper()
	until := time.Now().Add(15 * time.Second)
	for {
		st, err := f.client().Status(context.Background())
		if err == nil && len(st.Agents) == 1 && st.Agents[0].Files == n {
			return
		}
		if time.Now().After(until) {
			f.t.Fatalf("%s: %+v %v", what, st, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// followedAt waits for a record of session to follow the log at rel,
// under the project directory.
func (f *following) followedAt(session, rel string) { f.t.Helper(); f.recordAt(session, rel, false) }

// moveOntoDeletedLog deletes the log at rel (of session), waits for it
// to be seen gone, then moves the log at from (of fromSession) onto its
// name and waits for that to be followed there. The deleted log's file is
// kept, so that no later file takes its identity.
func (f *following) moveOntoDeletedLog(rel, session, from, fromSession string) {
	f.t.Helper()
	deleted := filepath.Join(f.r.proj, rel)
	if err := os.Link(deleted, filepath.Join(f.r.home, "kept-"+filepath.Base(rel))); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Remove(deleted); err != nil {
		f.t.Fatal(err)
	}
	f.goneFrom(session, rel) // seen gone before a log takes its name
	if err := os.Rename(filepath.Join(f.r.proj, from), deleted); err != nil {
		f.t.Fatal(err)
	}
	f.followedAt(fromSession, rel)
}

// goneFrom waits for the record of session at rel to be marked gone.
func (f *following) goneFrom(session, rel string) { f.t.Helper(); f.recordAt(session, rel, true) }

func (f *following) recordAt(session, rel string, missing bool) {
	f.t.Helper()
	f.d.snap.mu.Lock() // Run sets the database under it
	db := f.d.db
	f.d.snap.mu.Unlock()
	path := filepath.Join(f.r.proj, rel)
	for until := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		srcs, _, err := db.Load()
		if err != nil {
			f.t.Fatal(err)
		}
		for _, s := range srcs {
			if s.Session == "claude/"+session && s.Path == path && s.Missing == missing {
				return
			}
		}
		if time.Now().After(until) {
			f.t.Fatalf("no record of %s at %s with missing %v", session, rel, missing)
		}
	}
}

func (f *following) client() *Client {
	f.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := Connect(f.r.data)
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			f.t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// status notes status once it is published with nothing live (it lags a
// loop behind).
func (f *following) status(when string) {
	f.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var st Status
	for {
		var err error
		if st, err = f.client().Status(context.Background()); err != nil {
			f.t.Fatal(err)
		}
		// Files > 0 too: the status is a snapshot the loop publishes at
		// the end of an iteration, and a first catch-up may write and let
		// go of every session within one (the initial snapshot, with no
		// file yet, has no live session either).
		if len(st.Agents) == 1 && st.Agents[0].Live == 0 && st.Agents[0].Files > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, a := range st.Agents {
		f.note("%s: status %s files %d flushed %d live %d skipped %d", when, a.Agent, a.Files, a.Flushed, a.Live, a.Skipped)
	}
}

// summary is what was noted, the maps of the sessions named and every
// record, once the daemon stopped.
func (f *following) summary(ids ...string) string {
	f.t.Helper()
	for _, id := range ids {
		f.note("map %s: %s", id, f.r.mapOf(id))
	}
	db := openState(f.t, f.r)
	defer db.Close()
	srcs, sessions, err := db.Load()
	if err != nil {
		f.t.Fatal(err)
	}
	return strings.Join(append(f.out, recordLines(f.r.home, srcs, sessions)...), "\n") + "\n"
}

// recordLines is what two homes' state records must agree on, sorted: the
// logs' paths under their home, where they were read to and what they
// gave, and each session's map. Ids and times are left out: they tell
// when things happened, not what.
func recordLines(home string, srcs []*state.Source, sessions []*state.Session) []string {
	var records []string
	for _, s := range srcs {
		rel, _ := filepath.Rel(home, s.Path)
		records = append(records, fmt.Sprintf("source %s session %s lane %s offset %d lines %d skipped %d missing %v",
			filepath.ToSlash(rel), s.Session, s.Lane, s.Offset, s.Lines, s.Skipped, s.Missing))
	}
	for _, s := range sessions {
		fl := "no flush"
		if s.Flush != nil {
			fl = fmt.Sprintf("map %s %s events %d", s.Flush.Path, s.Flush.SHA256, s.Flush.Events)
		}
		records = append(records, fmt.Sprintf("session %s parent %q: %s", s.Key, s.Parent, fl))
	}
	sort.Strings(records)
	return records
}

// A reload with the same privacy.exclude patterns (another setting
// changed) does not apply them again: that would take every session let go
// of up again. Other patterns are applied.
func TestExcludeReloadedUnchangedAppliesNothing(t *testing.T) {
	r, opt := quickRig(t, time.Nanosecond)
	r.append("s1.jsonl", cwdLine("s1", "user", "/w/app"))
	r.append("s2.jsonl", cwdLine("s2", "user", "/later/x"))
	f := startFollowing(t, r, opt)
	defer f.stop()
	f.waitMap("s1", fakeMap(map[string][]string{"": {"user"}}))
	f.waitMap("s2", fakeMap(map[string][]string{"": {"user"}}))
	later := func(dir string) bool { return strings.HasPrefix(dir, "/later") }
	reload := func(key string, exclude func(string) bool) {
		f.d.Reconfigure(Live{Idle: r.idle, Roots: opt.Roots, Mapper: fakeMapper, Exclude: exclude, ExcludeKey: key})
		for until := time.Now().Add(15 * time.Second); len(f.d.reconf) > 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(until) {
				t.Fatal("the reload not taken")
			}
		}
	}
	reload("k1", later)
	f.waitMap("s2", "")
	reload("k1", later) // the same patterns, another setting
	reload("k2", func(dir string) bool { return later(dir) || dir == "/w/app" })
	f.waitMap("s1", "")
	f.stop()
	if f.d.excludeApplied != 2 {
		t.Errorf("patterns applied %d times over three reloads, two of them new patterns", f.d.excludeApplied)
	}
}

// A privacy.exclude reloaded while sessions are let go of still forgets
// the sessions it covers.
func TestExcludeReloadedCoversRetiredSessions(t *testing.T) {
	r, opt := quickRig(t, time.Nanosecond)
	r.append("s1.jsonl", cwdLine("s1", "user", "/w/app"))
	r.append("s2.jsonl", cwdLine("s2", "user", "/later/x"))
	retiredNow := watchRetired(t)
	d := New(opt)
	stop := follow(t, d)
	defer stop()
	deadline := time.After(15 * time.Second)
	for n := 0; n < 2; {
		select {
		case n = <-retiredNow:
		case <-deadline:
			t.Fatal("the two sessions not let go of")
		}
	}
	if r.mapOf("s1") == "" || r.mapOf("s2") == "" {
		t.Fatal("maps not written before they were let go of")
	}
	d.Reconfigure(Live{Idle: r.idle, Roots: opt.Roots, Mapper: fakeMapper,
		Exclude: func(dir string) bool { return strings.HasPrefix(dir, "/later") }})
	until := time.Now().Add(15 * time.Second)
	for r.mapOf("s2") != "" {
		if time.Now().After(until) {
			t.Fatal("the map of the excluded session, let go of, is still there")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if r.mapOf("s1") == "" {
		t.Fatal("the other session's map went too")
	}
	db := openState(t, r)
	defer db.Close()
	_, sessions, err := db.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 1 || sessions[0].Key != "claude/s1" {
		t.Fatalf("sessions recorded after the exclusion: %v", sessions)
	}
}

// Every test of a following daemon, run again with sessions let go of as
// soon as they are written: each must end as it does when they are kept.
func TestFollowingDaemonsLettingGoAtOnce(t *testing.T) {
	defer func(d time.Duration, n, w int) { retireAfterDefault, compactMapsFrom, walkChunk = d, n, w }(retireAfterDefault, compactMapsFrom, walkChunk)
	// And the maps rebuilt each time, the first scan read two logs at a time.
	retireAfterDefault, compactMapsFrom, walkChunk = time.Nanosecond, 1, 2
	var mu sync.Mutex
	most := map[string]int{} // the most sessions retired at once, by subtest
	var current string
	retiredHook = func(n int) {
		mu.Lock()
		most[current] = max(most[current], n)
		mu.Unlock()
	}
	defer func() { retiredHook = nil }()
	run := func(name string, test func(*testing.T)) {
		mu.Lock()
		current = name
		mu.Unlock()
		t.Run(name, test)
	}
	defer func() {
		t.Logf("sessions let go of at most, by test: %v", most)
		n := 0
		for _, m := range most {
			if m > 0 {
				n++
			}
		}
		if n < 6 {
			t.Errorf("sessions let go of in %d of the tests, want at least 6", n)
		}
	}()
	run("follow", TestFollow)
	run("idle on the clock", TestIdleOnTheClock)
	run("backoff on the clock", TestBackoffOnTheClock)
	run("compressed rollout", TestCompressedRolloutWhileFollowing)
	run("settles after its catch-up", TestFollowSettlesAfterItsCatchUp)
	run("exclude waits for a cwd", TestExcludeWaitsForACWD)
	run("control and reconfigure", TestControlAndReconfigure)
	run("exclude added later", TestExcludeAddedLater)
	run("reconfigure roots", TestReconfigureRoots)
	run("last flush survives a restart", TestLastFlushSurvivesARestart)
}

// The set keeps a following daemon's paths by hash, refusing a session
// one of whose paths hashes as a retired log's; it counts logs and
// sessions per agent, and drops the ids of sessions taken up again once
// they are half of its slice.
func TestRetiredSetPathsAgentsAndCompaction(t *testing.T) {
	defer func(h func(string) uint64) { retiredPathHash = h }(retiredPathHash)
	retiredPathHash = func(p string) uint64 { return uint64(len(p)) }
	var r retiredSet
	fid := func(i int) watchers.FileID { return watchers.FileID{Dev: 1, Ino: uint64(i)} }
	if !r.addEntry(retiredEntry{key: "claude/a", agent: "claude", ids: []uint64{1, 2}, files: []watchers.FileID{fid(1), fid(2)},
		paths: []string{"/l/a.jsonl", "/l/a/subagents/x.jsonl"}, logs: 2, counted: true}) {
		t.Fatal("first session refused")
	}
	if r.addEntry(retiredEntry{key: "codex/b", agent: "codex", ids: []uint64{3}, files: []watchers.FileID{fid(3)},
		paths: []string{"/l/b.jsonl"}, counted: true}) {
		t.Error("a session whose path hashes as a retired log's was retired")
	}
	if _, _, ok := r.lookup("codex/b"); ok {
		t.Error("the refused session is known")
	}
	h, ids, ok := r.byPath("/l/a.jsonl")
	if !ok || len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Fatalf("by path: %v %v", ids, ok)
	}
	if _, _, ok := r.byPath("/l/zz.jsonl"); ok {
		t.Error("a path of no retired log found")
	}
	if len(r.agents) != 1 || r.agents[0] != (retiredAgent{name: "claude", logs: 2, sessions: 1}) {
		t.Errorf("agents %+v", r.agents)
	}
	r.remove(h, []watchers.FileID{fid(1), fid(2)}, []string{"/l/a.jsonl", "/l/a/subagents/x.jsonl"})
	if len(r.paths) != 0 || len(r.files) != 0 || r.agents[0].logs != 0 || r.agents[0].sessions != 0 || r.counted != 0 {
		t.Errorf("after remove: paths %d files %d agents %+v counted %d", len(r.paths), len(r.files), r.agents, r.counted)
	}
	// A session tried once (remove without paths) leaves its paths; a
	// later look-up finds no session and forgets them.
	r.addEntry(retiredEntry{key: "codex/b", agent: "codex", ids: []uint64{3}, paths: []string{"/l/b.jsonl"}})
	hb, _, _ := r.lookup("codex/b")
	r.remove(hb, nil, nil)
	if _, _, ok := r.byPath("/l/b.jsonl"); ok || len(r.paths) != 0 {
		t.Errorf("a path of a session tried once still answers (%d paths)", len(r.paths))
	}

	// Many sessions let go of and taken up again: the slice of ids is
	// compacted, and the sessions still retired keep theirs.
	retiredPathHash = func(p string) uint64 { return uint64(crc32.ChecksumIEEE([]byte(p))) }
	for round := 0; round < 4; round++ {
		for i := 0; i < 1000; i++ {
			key := fmt.Sprintf("claude/s%d", i)
			if !r.addEntry(retiredEntry{key: key, agent: "claude", ids: []uint64{uint64(10 * i), uint64(10*i + 1)},
				paths: []string{"/p/" + key}, logs: 2, counted: true}) {
				t.Fatalf("round %d: %s refused", round, key)
			}
		}
		for i := 0; i < 1000; i++ {
			if i%10 == 0 && round == 3 {
				continue // these stay
			}
			h, _, _ := r.lookup(fmt.Sprintf("claude/s%d", i))
			r.remove(h, nil, []string{fmt.Sprintf("/p/claude/s%d", i)})
		}
	}
	if r.len() != 100 || len(r.ids) > 4000 || r.agents[0].sessions != 100 || r.agents[0].logs != 200 {
		t.Errorf("after the rounds: %d retired, %d ids kept, agents %+v", r.len(), len(r.ids), r.agents)
	}
	for i := 0; i < 1000; i += 10 {
		_, ids, ok := r.byPath(fmt.Sprintf("/p/claude/s%d", i))
		if !ok || len(ids) != 2 || ids[0] != uint64(10*i) || ids[1] != uint64(10*i+1) {
			t.Fatalf("s%d after compaction: %v %v", i, ids, ok)
		}
	}
}

// watchRetired returns the counts of retired sessions the daemon reports
// after each look at its sessions, until the test ends; a count nobody
// takes in time is dropped, never waited for.
func watchRetired(t *testing.T) <-chan int {
	ch := make(chan int, 100)
	retiredHook = func(n int) {
		select {
		case ch <- n:
		default:
		}
	}
	t.Cleanup(func() { retiredHook = nil })
	return ch
}

// compactMaps rebuilds the maps with the same entries.
func TestCompactMapsKeepsEveryEntry(t *testing.T) {
	r := newRig(t)
	d := New(r.opts(false))
	for i := 0; i < 3; i++ {
		key := fmt.Sprintf("claude/s%d", i)
		src := &state.Source{ID: uint64(i + 1), Path: fmt.Sprintf("/l/s%d.jsonl", i), Session: key, Dev: 1, Ino: uint64(i + 1)}
		d.srcs[src.ID], d.byPath[src.Path] = src, src
		d.sessions[key] = &state.Session{Key: key}
		d.sizes[src.Path], d.summed[src.ID] = int64(i), true
		d.parsers[src.ID] = &fakeParser{}
		d.index(src)
		d.idx.pending[key] = true
	}
	d.idx.noFileID[9] = &state.Source{ID: 9}
	before := fmt.Sprintf("%v %v %v %v %v %v %v %v %v %v", d.srcs, d.byPath, d.sessions, d.parsers, d.sizes, d.summed,
		d.idx.bySession, d.idx.byFileID, d.idx.noFileID, d.idx.pending)
	d.mapsPeak = 4096
	d.compactMaps()
	after := fmt.Sprintf("%v %v %v %v %v %v %v %v %v %v", d.srcs, d.byPath, d.sessions, d.parsers, d.sizes, d.summed,
		d.idx.bySession, d.idx.byFileID, d.idx.noFileID, d.idx.pending)
	if after != before {
		t.Errorf("maps after the rebuild:\n%s\nbefore:\n%s", after, before)
	}
	if d.mapsPeak != 3 {
		t.Errorf("peak %d after the rebuild, want 3", d.mapsPeak)
	}
}

// A log moved onto the name of a deleted log, both sessions let go of and
// taken up again in any order, stays followed under its new name by its
// own session: the deleted log's session does not take the name back.
func TestRetiredLogMovedOntoADeletedLogsName(t *testing.T) {
	kept := followMovedOnto(t, -1)
	retiring := followMovedOnto(t, time.Nanosecond)
	if retiring != kept {
		t.Errorf("retiring daemon ended with\n%s\nthe daemon that keeps all with\n%s", retiring, kept)
	}
}

func followMovedOnto(t *testing.T, retireAfter time.Duration) string {
	r, opt := quickRig(t, retireAfter)
	r.append("a.jsonl", line("a", "user"))
	r.append("s.jsonl", line("s", "user"))
	f := startFollowing(t, r, opt)
	defer f.stop()
	f.waitMap("a", fakeMap(map[string][]string{"": {"user"}}))
	f.waitMap("s", fakeMap(map[string][]string{"": {"user"}}))
	f.waitRetired(2)
	if err := os.Remove(filepath.Join(r.proj, "a.jsonl")); err != nil {
		t.Fatal(err)
	}
	f.waitFiles(1, "a's log not seen gone")
	f.waitRetired(2) // a, its log gone, and s
	if err := os.Rename(filepath.Join(r.proj, "s.jsonl"), filepath.Join(r.proj, "a.jsonl")); err != nil {
		t.Fatal(err)
	}
	r.append("a.jsonl", line("s", "llm"))
	f.waitMap("s", fakeMap(map[string][]string{"": {"user", "llm"}}))
	f.waitRetired(2)
	for i := 0; i < 3; i++ { // every session taken up, in the map's order, and let go of again
		if _, err := f.client().Flush(context.Background(), "", true); err != nil {
			t.Fatal(err)
		}
		f.waitRetired(2)
	}
	r.append("a.jsonl", line("s", "result"))
	f.waitMap("s", fakeMap(map[string][]string{"": {"user", "llm", "result"}}))
	f.status("at the end")
	f.stop()
	return f.summary("a", "s")
}

// A following daemon's first scan of old history is read in pieces, the
// sessions written and let go of after each: a session's subagent log in
// the next piece takes it up again, and the maps and records end as those
// of a daemon that reads the scan whole and keeps everything.
func TestFirstCatchUpInPieces(t *testing.T) {
	defer func(w int) { walkChunk = w }(walkChunk)
	walkChunk = 1
	kept := followOldHistory(t, -1)
	retiring := followOldHistory(t, time.Nanosecond)
	if retiring.summary != kept.summary {
		t.Errorf("read in pieces:\n%s\nread whole:\n%s", retiring.summary, kept.summary)
	}
	if retiring.restored == 0 {
		t.Error("no session taken up again: the subagent log did not come in a later piece")
	}
}

func followOldHistory(t *testing.T, retireAfter time.Duration) retiringRun {
	r, opt := quickRig(t, retireAfter)
	r.append("a.jsonl", line("a", "user"), line("a", "llm"))
	r.append("a/subagents/agent-x.jsonl", line("a", "call"))
	r.append("b.jsonl", line("b", "user"))
	r.append("c.jsonl", line("c", "user"), line("c", "result"))
	old := time.Now().Add(-48 * time.Hour)
	for _, rel := range []string{"a.jsonl", "a/subagents/agent-x.jsonl", "b.jsonl", "c.jsonl"} {
		if err := os.Chtimes(filepath.Join(r.proj, rel), old, old); err != nil {
			t.Fatal(err)
		}
	}
	f := startFollowing(t, r, opt)
	defer f.stop()
	f.waitMap("a", fakeMap(map[string][]string{"": {"user", "llm"}, "sa-x": {"call"}}))
	f.waitMap("b", fakeMap(map[string][]string{"": {"user"}}))
	f.waitMap("c", fakeMap(map[string][]string{"": {"user", "result"}}))
	f.waitRetired(3)
	f.status("caught up")
	f.stop()
	return retiringRun{summary: f.summary("a", "b", "c"), retired: f.d.retired.len(), restored: f.d.restored}
}

// quickRig is a home and the options of a following daemon that writes a
// session's map 30 ms after its last change, rescans every 30 ms, serves
// its control socket and lets go of sessions after retireAfter.
func quickRig(t *testing.T, retireAfter time.Duration) (*rig, Options) {
	r := newRig(t)
	r.idle = 30 * time.Millisecond
	opt := r.opts(false)
	opt.Rescan, opt.RetireAfter, opt.Control = 30*time.Millisecond, retireAfter, true
	return r, opt
}

// A session's subagent log moved onto the name of the session's deleted
// main log (a younger log: its record comes after the subagent log's) is
// followed there by its own record once the session is let go of and
// taken up again: the deleted log's record, of the same session and path,
// does not take the name back and read the moved log a second time.
func TestRetiredLogMovedOntoADeletedLogOfItsSession(t *testing.T) {
	kept := followMovedOntoItsSession(t, -1)
	retiring := followMovedOntoItsSession(t, time.Nanosecond)
	if retiring != kept {
		t.Errorf("retiring daemon ended with\n%s\nthe daemon that keeps all with\n%s", retiring, kept)
	}
}

func followMovedOntoItsSession(t *testing.T, retireAfter time.Duration) string {
	r, opt := quickRig(t, retireAfter)
	r.append("s/subagents/agent-x.jsonl", line("s", "call"))
	f := startFollowing(t, r, opt)
	defer f.stop()
	f.waitMap("s", fakeMap(map[string][]string{"sa-x": {"call"}}))
	f.waitRetired(1)
	r.append("s.jsonl", line("s", "user"))
	f.waitMap("s", fakeMap(map[string][]string{"": {"user"}, "sa-x": {"call"}}))
	f.waitRetired(1)
	if err := os.Remove(filepath.Join(r.proj, "s.jsonl")); err != nil {
		t.Fatal(err)
	}
	f.waitFiles(1, "s's main log not seen gone")
	f.waitRetired(1) // s, its main log gone
	if err := os.Rename(filepath.Join(r.proj, "s", "subagents", "agent-x.jsonl"), filepath.Join(r.proj, "s.jsonl")); err != nil {
		t.Fatal(err)
	}
	// Read again as the main lane, beside what the deleted log gave.
	f.waitMap("s", " session 1\n call 1\n session 1\n user 1\n")
	f.waitRetired(1)
	r.append("s.jsonl", line("s", "llm")) // takes s up again by the name
	f.waitMap("s", " session 1\n call 1\n llm 2\n session 1\n user 1\n")
	f.waitRetired(1)
	f.status("at the end")
	f.stop()
	return f.summary("s")
}
