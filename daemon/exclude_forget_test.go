package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/state/mapstore"
)

// A session the state could not forget stays to be forgotten: a reload,
// even with the same patterns, forgets it once the state has room again,
// and the patterns' key is stored only then (a reload that did not look at
// it stored the key, and the next start took the session up and mapped
// it).
func TestUnforgottenSessionForgottenAtTheNextReload(t *testing.T) {
	r := secretRigForgetFailing(t)

	opt := r.opts(false)
	opt.Control = true
	opt.Exclude = func(dir string) bool { return strings.HasPrefix(dir, "/secret") }
	opt.ExcludeKey = "k1"
	d := New(opt)
	stop := follow(t, d)
	defer stop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := Connect(r.data)
		if err == nil {
			if _, err = c.Status(context.Background()); err == nil {
				break // the start's purge is done (the control server starts after it)
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no control socket")
		}
		time.Sleep(10 * time.Millisecond)
	}
	forgetInState = (*state.DB).Forget // the disk has room again
	// A reload for another setting, the same patterns: they are applied
	// again, as a session is left to forget.
	var looked atomic.Bool
	d.Reconfigure(Live{Idle: time.Hour, Roots: opt.Roots, Mapper: fakeMapper, ExcludeKey: "k1",
		Exclude: func(dir string) bool {
			looked.Store(true)
			return strings.HasPrefix(dir, "/secret")
		}})
	for !looked.Load() {
		if time.Now().After(deadline) {
			t.Fatal("reload not applied")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop() // the reload's purge ends before the loop stops

	db := openState(t, r)
	_, sessions, _ := db.Load()
	key, _ := db.Setting(state.SettingExcludeKey)
	db.Close()
	if len(sessions) != 1 || key == "" {
		t.Fatalf("after the reload: %d sessions in the state, key stored %v; want 1, stored", len(sessions), key != "")
	}

	// Next start, same patterns: s2 grew meanwhile.
	r.append("s2.jsonl", line("s2", "call"))
	r.onceExcluding("/secret", "k1")
	db = openState(t, r)
	_, sessions, _ = db.Load()
	db.Close()
	if len(sessions) != 1 || r.mapOf("s2") != "" {
		t.Fatalf("next start: %d sessions in the state, map of the excluded s2: %q", len(sessions), r.mapOf("s2"))
	}
}

// An excluded session's maps are found by their names in the store, not
// only through its record: a map that could not be removed once, whose
// record a child rollout then wrote again without it, is removed when the
// session is forgotten at the next start.
func TestExcludedSessionsMapsFoundInTheStore(t *testing.T) {
	r, dir := codexRig(t)
	child := filepath.Join(dir, "rollout-2-c.jsonl")
	os.WriteFile(filepath.Join(dir, "rollout-1-p.jsonl"), []byte(cwdLine("p", "user", "/secret/x")+line("p", "call")), 0o600)
	os.WriteFile(child, []byte(`{"s":"c","k":"user","p":"p","cwd":"/w/app"}`+"\n"+line("c", "llm")), 0o600)
	r.codexOnce()
	rel := mapstore.RelPath("codex", "p", time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	mapPath := filepath.Join(r.store.Root, rel)
	saved, err := os.ReadFile(mapPath)
	if err != nil {
		t.Fatal(err)
	}
	// The map cannot be removed this time (here: a non-empty directory in its place).
	os.Remove(mapPath)
	os.MkdirAll(filepath.Join(mapPath, "x"), 0o700)
	run := func() { r.onceExcluding("/secret", "k1", fakeAgentNamed("codex")) }
	f, _ := os.OpenFile(child, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line("c", "result")) // the child grows
	f.Close()
	run()
	db := openState(t, r)
	_, sessions, _ := db.Load()
	db.Close()
	kept := false
	for _, s := range sessions {
		kept = kept || s.Key == "codex/p"
	}
	if !kept {
		t.Fatal("the parent's records were forgotten though its map could not be removed")
	}
	// The failure was transient: the map is a file again.
	os.RemoveAll(mapPath)
	os.WriteFile(mapPath, saved, 0o600)
	run()
	db = openState(t, r)
	srcs, sessions, _ := db.Load()
	db.Close()
	var keys []string
	for _, s := range sessions {
		keys = append(keys, s.Key)
	}
	t.Logf("after the next start: %d sources, sessions %v", len(srcs), keys)
	if _, err := os.Stat(mapPath); err == nil {
		t.Fatalf("the excluded parent's map is still on disk, and no record names it")
	}
}

// A session the state could not forget is forgotten at the next start even
// when its log is gone by then and cannot say it is covered: the state
// keeps which sessions are left to forget. (Judged by its logs alone, it
// was kept, its map written again, and the patterns' key stored.)
func TestUnforgottenSessionForgottenAfterItsLogWent(t *testing.T) {
	r := secretRigForgetFailing(t)
	r.onceExcluding("/secret", "k1")
	forgetInState = (*state.DB).Forget
	if err := os.Remove(filepath.Join(r.proj, "s2.jsonl")); err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ { // the second start finds s2's log marked deleted
		r.onceExcluding("/secret", "k1")
		if r.mapOf("s1") == "" || r.mapOf("s2") != "" {
			t.Fatalf("start %d: maps s1 %q, s2 %q", run, r.mapOf("s1"), r.mapOf("s2"))
		}
	}
	db := openState(t, r)
	defer db.Close()
	_, sessions, _ := db.Load()
	key, _ := db.Setting(state.SettingExcludeKey)
	pending, _ := db.Setting(state.SettingExcludePending)
	if len(sessions) != 1 || sessions[0].NativeID != "s1" || key == "" || pending != "" {
		t.Fatalf("state: %d sessions, key stored %v, left to forget %q", len(sessions), key != "", pending)
	}
}

// A covered Codex child rollout leaves its parent's map, which is written
// again without the child's lane.
func TestExcludedChildLeavesItsParentsMap(t *testing.T) {
	r, dir := codexRig(t)
	os.WriteFile(filepath.Join(dir, "rollout-1-p.jsonl"), []byte(cwdLine("p", "user", "/w/app")+line("p", "call")), 0o600)
	os.WriteFile(filepath.Join(dir, "rollout-2-c.jsonl"), []byte(`{"s":"c","k":"user","p":"p","cwd":"/secret/x"}`+"\n"+line("c", "llm")), 0o600)
	r.codexOnce()
	parentMap := func() string {
		b, _ := r.store.Read(mapstore.RelPath("codex", "p", time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)))
		return string(b)
	}
	if !strings.Contains(parentMap(), "sa-c") {
		t.Fatalf("the child is not a lane of its parent's map to begin with: %q", parentMap())
	}
	r.onceExcluding("/secret", "k1", fakeAgentNamed("codex"))
	if m := parentMap(); m == "" || strings.Contains(m, "sa-c") {
		t.Fatalf("the parent's map after its child was excluded: %q", m)
	}
}

// secretRigForgetFailing is a rig whose two sessions are mapped, s1 in
// /w/app and s2 in /secret/x, with the state failing to forget anything
// (a full disk) until the test sets forgetInState back.
func secretRigForgetFailing(t *testing.T) *rig {
	r := newRig(t)
	r.append("s1.jsonl", cwdLine("s1", "user", "/w/app"), line("s1", "llm"))
	r.append("s2.jsonl", cwdLine("s2", "user", "/secret/x"), line("s2", "llm"))
	r.once()
	saved := forgetInState
	t.Cleanup(func() { forgetInState = saved })
	forgetInState = func(*state.DB, ...state.Forgotten) error { return errors.New("disk full") }
	return r
}

// A following daemon tries again, on its own, to forget a session it
// could not: no reload or restart is needed once the state has room.
func TestUnforgottenSessionRetriedWhileFollowing(t *testing.T) {
	r := secretRigForgetFailing(t)
	var failing atomic.Bool
	failing.Store(true)
	forgetInState = func(db *state.DB, fs ...state.Forgotten) error {
		if failing.Load() {
			return errors.New("disk full")
		}
		return db.Forget(fs...)
	}
	defer func(d time.Duration) { unforgottenRetry = d }(unforgottenRetry)
	unforgottenRetry = 20 * time.Millisecond
	opt := r.opts(false)
	opt.Control = true
	opt.Exclude = func(dir string) bool { return strings.HasPrefix(dir, "/secret") }
	opt.ExcludeKey = "k1"
	stop := follow(t, New(opt))
	defer stop()
	excluded := func() int {
		c, err := Connect(r.data)
		if err != nil {
			return -1
		}
		st, err := c.Status(context.Background())
		if err != nil {
			return -1
		}
		return st.Excluded
	}
	deadline := time.Now().Add(10 * time.Second)
	before := excluded()
	for ; before < 0; before = excluded() {
		if time.Now().After(deadline) {
			t.Fatal("no control socket")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // retries that fail change nothing
	if n := excluded(); n != before {
		t.Fatalf("excluded went from %d to %d while the state could not forget", before, n)
	}
	failing.Store(false) // the disk has room again
	for excluded() <= before {
		if time.Now().After(deadline) {
			t.Fatal("the session left to forget was not tried again")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	db := openState(t, r)
	defer db.Close()
	_, sessions, _ := db.Load()
	pending, _ := db.Setting(state.SettingExcludePending)
	if len(sessions) != 1 || pending != "" {
		t.Fatalf("state: %d sessions, left to forget %q", len(sessions), pending)
	}
}

// A log privacy.exclude kept out is read once a reload no longer covers
// it, not only when it next changes (the watcher reports changes only).
func TestExcludeLiftedReadsTheLogsKeptOut(t *testing.T) {
	r, opt, d, deadline := followingWithSecret(t)
	if r.mapOf("s2") != "" {
		t.Fatal("s2 mapped")
	}
	d.Reconfigure(Live{Idle: r.idle, Roots: opt.Roots, Mapper: fakeMapper})
	for r.mapOf("s2") == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r.mapOf("s2") == "" {
		t.Fatal("s2 not mapped after the pattern went")
	}
}

// A log kept out is judged again when it changes: emptied and written
// with another session's lines, whose directory no pattern covers, it is
// read (it was kept out for as long as the same file stayed there).
func TestKeptOutLogJudgedAgainWhenItChanges(t *testing.T) {
	r, _, _, deadline := followingWithSecret(t)
	p := filepath.Join(r.proj, "s2.jsonl")
	if err := os.Truncate(p, 0); err != nil { // the same file, emptied
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	r.append("s2.jsonl", cwdLine("s3", "user", "/w/other"), line("s3", "llm"))
	for r.mapOf("s3") == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r.mapOf("s3") == "" || r.mapOf("s2") != "" {
		t.Fatalf("maps: s3 %q, s2 %q", r.mapOf("s3"), r.mapOf("s2"))
	}
}

// followingWithSecret starts a following daemon over s1 (in /w/app) and
// s2 (in /secret/x, which privacy.exclude covers), and waits for s1's map.
// It returns the deadline of the test's waits.
func followingWithSecret(t *testing.T) (*rig, Options, *Daemon, time.Time) {
	r, opt := quickRig(t, time.Hour)
	r.append("s1.jsonl", cwdLine("s1", "user", "/w/app"))
	r.append("s2.jsonl", cwdLine("s2", "user", "/secret/x"))
	opt.Exclude = func(dir string) bool { return strings.HasPrefix(dir, "/secret") }
	opt.ExcludeKey = "k1"
	d := New(opt)
	t.Cleanup(follow(t, d))
	deadline := time.Now().Add(5 * time.Second)
	for r.mapOf("s1") == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return r, opt, d, deadline
}
