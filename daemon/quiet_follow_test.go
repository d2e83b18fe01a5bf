package daemon

import (
	"fmt"
	"testing"
	"time"
)

// A daemon that follows, started again over a data directory that caught
// up before, lets go of the quiet sessions as it loads them instead of
// holding every record until its first look at them (the peak of its
// start at 100,000 sessions). Logs changed between the load and its
// watcher's first look (one appended to, one deleted, one moved to
// another name) have their sessions taken up again, and the daemon ends
// with the maps, records and status of one that keeps every session. A
// session active within RetireAfter is not let go of on load.
func TestFollowingDaemonLetsGoOfQuietSessionsOnLoad(t *testing.T) {
	const sessions = 6
	var first []step
	for i := range sessions {
		id := fmt.Sprintf("q%d", i)
		first = append(first, step{kind: createLog, path: "-w-app/" + id + ".jsonl", content: line(id, "user") + line(id, "call")})
	}
	changes := []step{
		{kind: appendLines, path: "-w-app/q0.jsonl", content: line("q0", "call")},
		{kind: deleteLog, path: "-w-app/q1.jsonl"},
		{kind: moveLog, path: "-w-app/q2.jsonl", to: "-w-app/q2-moved.jsonl"},
	}
	play := func(name string, retireAfter time.Duration) (end string, loaded, restored int) {
		h := startHome(t, name, retireAfter, first)
		for i := range sessions {
			h.f.waitMap(fmt.Sprintf("q%d", i), fakeMap(map[string][]string{"": {"user", "call"}}))
		}
		h.f.status("caught up") // every map's record committed
		h.f.stop()
		made := make(chan struct{})
		afterLoad = func() {
			for _, c := range changes {
				h.apply(c)
			}
			close(made)
		}
		defer func() { afterLoad = nil }()
		h.f.d = New(h.opt)
		h.f.stop = follow(t, h.f.d)
		select {
		case <-made:
		case <-time.After(15 * time.Second):
			t.Fatal("the daemon started again did not reach its first look at the logs")
		}
		h.f.waitMap("q0", fakeMap(map[string][]string{"": {"user", "call", "call"}}))
		h.f.goneFrom("q1", "q1.jsonl")
		h.f.followedAt("q2", "q2-moved.jsonl")
		h.f.waitFiles(sessions-1, "the deleted log no longer counted") // the status published after the sweep
		d := h.f.d
		end = h.finish()
		return end, d.retiredOnLoad, d.restored
	}
	kept, keptLoaded, _ := play("keeps all", -1)
	retiring, loaded, restored := play("lets go", time.Nanosecond)
	// Sessions active within RetireAfter stay, as retireIdle keeps them.
	recent, recentLoaded, _ := play("lets go after an hour", time.Hour)
	if keptLoaded != 0 || recentLoaded != 0 {
		t.Errorf("let go of as they were loaded: %d sessions by the daemon that keeps every session, %d by the one that lets go of those quiet for an hour, want none",
			keptLoaded, recentLoaded)
	}
	if recent != kept {
		t.Errorf("the daemon that lets go after an hour ended with\n%s\nthe one that keeps all with\n%s", recent, kept)
	}
	if loaded != sessions {
		t.Errorf("%d sessions let go of as they were loaded, want all %d (each quiet then)", loaded, sessions)
	}
	if restored != len(changes) {
		t.Errorf("%d sessions taken up again, want the %d whose logs changed after the load", restored, len(changes))
	}
	if retiring != kept {
		t.Errorf("the daemon that lets go ended with\n%s\nthe one that keeps all with\n%s\ndiffering:\n%s",
			retiring, kept, differing(kept, retiring))
	}
}
