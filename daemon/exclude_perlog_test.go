package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/state"
)

// secretSubagentRig keeps a session whose main log names /w/app and whose
// subagent log names /secret/x, and one all under /secret.
func secretSubagentRig(t *testing.T) *rig {
	r := newRig(t)
	r.append("a.jsonl", cwdLine("a", "user", "/w/app"), line("a", "llm"))
	r.append("a/subagents/agent-x.jsonl", cwdLine("a", "call", "/secret/x"))
	r.append("b.jsonl", cwdLine("b", "user", "/secret/y"))
	return r
}

// Patterns applied to what is kept judge each log as a running daemon
// judges a new one: the covered subagent log leaves with its events, its
// session stays with the logs no pattern covers, and its map is written
// again without the subagent's lane, byte for byte the map that patterns
// there from the start give; a session all of whose logs are covered goes.
func TestExcludeAppliedLaterJudgesEachLog(t *testing.T) {
	fromStart := secretSubagentRig(t)
	fromStart.onceExcluding("/secret", "k1")
	want := fakeMap(map[string][]string{"": {"user", "llm"}})
	if got := fromStart.mapOf("a"); got != want {
		t.Fatalf("patterns from the start: map of a\n%s\nwant\n%s", got, want)
	}

	r := secretSubagentRig(t)
	r.once()
	if got := r.mapOf("a"); got != fakeMap(map[string][]string{"": {"user", "llm"}, "sa-x": {"call"}}) {
		t.Fatalf("before the patterns: map of a\n%s", got)
	}
	r.onceExcluding("/secret", "k1")
	if got := r.mapOf("a"); got != fromStart.mapOf("a") {
		t.Fatalf("patterns applied later: map of a\n%s\nwant it as from the start\n%s", got, want)
	}
	if r.mapOf("b") != "" {
		t.Fatal("the map of b, all of it covered, is still there")
	}
	db := openState(t, r)
	srcs, sessions, err := db.Load()
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || filepath.Base(srcs[0].Path) != "a.jsonl" {
		t.Fatalf("sources kept: %d, want only a.jsonl's", len(srcs))
	}
	if len(sessions) != 1 || sessions[0].Key != "claude/a" || sessions[0].Dirty() {
		t.Fatalf("sessions kept: %+v; want claude/a, its map written for its last change", sessions)
	}
	// The next start, same patterns, changes nothing.
	before := r.mapOf("a")
	r.onceExcluding("/secret", "k1")
	if r.mapOf("a") != before {
		t.Fatal("the map of a changed at a start with the same patterns")
	}
}

// A covered log the state could not forget is forgotten at the next start
// even when it is gone by then: the state keeps its session's key with the
// ids of the logs to forget, not the whole session (which would take the
// logs no pattern covers with it). Meanwhile its lane has left the map.
func TestUnforgottenLogForgottenAfterItWent(t *testing.T) {
	r := secretSubagentRig(t)
	r.once()
	saved := forgetInState
	t.Cleanup(func() { forgetInState = saved })
	forgetInState = func(*state.DB, ...state.Forgotten) error { return errors.New("disk full") }
	r.onceExcluding("/secret", "k1")
	want := fakeMap(map[string][]string{"": {"user", "llm"}})
	if got := r.mapOf("a"); got != want {
		t.Fatalf("map of a after the failed forget\n%s\nwant\n%s", got, want)
	}
	db := openState(t, r)
	pending, _ := db.Setting(state.SettingExcludePending)
	kept, _, _ := db.Load()
	db.Close()
	if !strings.Contains(pending, "claude/a\t") {
		t.Fatalf("left to forget: %q; want claude/a with its log's id", pending)
	}
	if len(kept) != 3 { // b's, covered whole, and both of a's
		// The map is written without the log's events, which are still
		// stored: not taken for damage (a repair would have dropped them
		// where the state could not).
		t.Fatalf("%d sources in the state after the failed forget, want 3", len(kept))
	}

	forgetInState = saved
	if err := os.Remove(filepath.Join(r.proj, "a", "subagents", "agent-x.jsonl")); err != nil {
		t.Fatal(err)
	}
	r.onceExcluding("/secret", "k1")
	db = openState(t, r)
	srcs, sessions, _ := db.Load()
	pending, _ = db.Setting(state.SettingExcludePending)
	db.Close()
	if len(srcs) != 1 || filepath.Base(srcs[0].Path) != "a.jsonl" || len(sessions) != 1 || pending != "" {
		t.Fatalf("after the next start: %d sources (want a.jsonl's), %d sessions, left to forget %q", len(srcs), len(sessions), pending)
	}
	if got := r.mapOf("a"); got != want {
		t.Fatalf("map of a at the next start\n%s\nwant\n%s", got, want)
	}
}

// A reload that covers a log of a session that stays writes the session's
// map again at once, not when it is next due: until then the map in the
// store, and what a sink or an export takes of it, would hold what left.
// It holds whether the daemon keeps its sessions or lets go of them, and
// the session goes on growing after.
func TestExcludeReloadRewritesTheMapAtOnce(t *testing.T) {
	keepingAndLettingGo(t, "/w/app", "/secret/x", func(t *testing.T, r *rig, opt Options) {
		f := startFollowing(t, r, opt)
		defer f.stop()
		f.waitMap("a", fakeMap(map[string][]string{"": {"user", "llm"}, "sa-x": {"call"}}))
		f.d.Reconfigure(Live{Idle: time.Hour, Roots: opt.Roots, Mapper: fakeMapper, ExcludeKey: "k1",
			Exclude: func(dir string) bool { return strings.HasPrefix(dir, "/secret") }})
		f.waitMap("a", fakeMap(map[string][]string{"": {"user", "llm"}}))
		r.append("a.jsonl", line("a", "result"))
		f.d.Reconfigure(Live{Idle: 30 * time.Millisecond, Roots: opt.Roots, Mapper: fakeMapper, ExcludeKey: "k1",
			Exclude: func(dir string) bool { return strings.HasPrefix(dir, "/secret") }})
		f.waitMap("a", fakeMap(map[string][]string{"": {"user", "llm", "result"}}))
	})
}

// keepingAndLettingGo runs a test with a following daemon's rig that
// keeps its sessions and with one that lets go of them at once, over a
// session a whose main log names mainCWD and whose subagent log names
// subCWD.
func keepingAndLettingGo(t *testing.T, mainCWD, subCWD string, test func(t *testing.T, r *rig, opt Options)) {
	for _, retire := range []time.Duration{-1, time.Nanosecond} {
		t.Run(retire.String(), func(t *testing.T) {
			r, opt := quickRig(t, retire)
			r.append("a.jsonl", cwdLine("a", "user", mainCWD), line("a", "llm"))
			r.append("a/subagents/agent-x.jsonl", cwdLine("a", "call", subCWD))
			test(t, r, opt)
		})
	}
}

// A deleted main log back where a pattern now covers it, met by a
// following daemon in the same update as its session's subagent log: the
// main log leaves, the subagent log is read once (a session let go of
// between the two files had its subagent log read again as a new one,
// its events twice in the map).
func TestExcludedLogBackInTheSameUpdateAsItsSessionsOther(t *testing.T) {
	keepingAndLettingGo(t, "/secret/x", "/w/app", func(t *testing.T, r *rig, opt Options) {
		r.once()
		away := filepath.Join(r.home, "a-away.jsonl")
		if err := os.Rename(filepath.Join(r.proj, "a.jsonl"), away); err != nil {
			t.Fatal(err)
		}
		r.onceExcluding("/secret", "k1") // the patterns' key stored; a.jsonl gone meanwhile
		if err := os.Rename(away, filepath.Join(r.proj, "a.jsonl")); err != nil {
			t.Fatal(err)
		}
		opt.Exclude = func(dir string) bool { return strings.HasPrefix(dir, "/secret") }
		opt.ExcludeKey = "k1"
		f := startFollowing(t, r, opt)
		f.waitMap("a", fakeMap(map[string][]string{"sa-x": {"call"}}))
		time.Sleep(200 * time.Millisecond) // rescans
		f.stop()
		if got, want := r.mapOf("a"), fakeMap(map[string][]string{"sa-x": {"call"}}); got != want {
			t.Fatalf("map of a\n%s\nwant\n%s", got, want)
		}
		db := openState(t, r)
		srcs, _, _ := db.Load()
		db.Close()
		if len(srcs) != 1 || filepath.Base(srcs[0].Path) != "agent-x.jsonl" {
			t.Fatalf("%d sources in the state, want the subagent log's alone", len(srcs))
		}
	})
}

// A session left with logs that give no event once a covered log leaves
// has its map removed: the map held the covered log.
func TestExcludeLeavingNoEventsRemovesTheMap(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", cwdLine("a", "user", "/secret/x"), line("a", "llm"))
	r.append("a/subagents/agent-x.jsonl", `{"s":"a","cwd":"/w/app"}`+"\n")
	r.once()
	if r.mapOf("a") == "" {
		t.Fatal("no map of a before the pattern")
	}
	r.onceExcluding("/secret", "k1")
	if got := r.mapOf("a"); got != "" {
		t.Fatalf("map of a still there after the pattern: %q", got)
	}
}
