package daemon

import (
	"strings"
	"testing"
	"time"
)

// When file notifications cannot cover every directory followed (here the
// watch cap; for real, inotify's limits, watchers TestWatcherSaysTheInotify
// LimitItHit), the daemon's status says so, for `status` and `doctor`: new
// logs there wait for a rescan, which nothing else would show.
func TestStatusSaysWhatIsNotWatched(t *testing.T) {
	r := newRig(t)
	r.append("s1.jsonl", line("s1", "user"))
	r.append("s2/subagents/agent-x.jsonl", line("s2", "call"))
	opt := r.opts(false)
	opt.MaxWatches = 1
	d := New(opt)
	stop := follow(t, d)
	defer stop()
	deadline := time.Now().Add(15 * time.Second)
	for d.Status().Notifications == "" {
		if time.Now().After(deadline) {
			t.Fatal("status never said that directories are not watched")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := d.Status().Notifications; !strings.Contains(n, "cap on directory watches (1)") {
		t.Errorf("notifications: %q", n)
	}

	// Within its limits, nothing is said.
	r2 := newRig(t)
	r2.append("s1.jsonl", line("s1", "user"))
	d2 := New(r2.opts(false))
	stop2 := follow(t, d2)
	defer stop2()
	for d2.Status().Agents == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := d2.Status().Notifications; n != "" {
		t.Errorf("notifications within the limits: %q", n)
	}
}
