package daemon

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
)

// mapperWithHeader is the fake mapper of other map options: the same maps,
// under a first line naming the options.
func mapperWithHeader(header string) Mapper {
	return func(events []event.Event) (Built, error) {
		b, err := fakeMapper(events)
		b.Gzip = append([]byte(header+"\n"), b.Gzip...)
		return b, err
	}
}

func (r *rig) onceWithMapper(m Mapper, identity string) {
	r.t.Helper()
	o := r.opts(true)
	o.Mapper, o.MapIdentity = m, identity
	if err := New(o).Run(t0ctx()); err != nil {
		r.t.Fatalf("run --once: %v", err)
	}
}

func mapIdentityOf(t *testing.T, r *rig) string {
	t.Helper()
	db := openState(t, r)
	defer db.Close()
	v, err := db.Setting(state.SettingMapIdentity)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Maps written with other options (an upgrade's builder, other prices or
// path mode) are all written again by the next scan, those of sessions
// that did not change and whose logs are gone too, once; a first scan
// writes nothing twice.
func TestScanWritesAgainTheMapsOfOtherOptions(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", line("a", "user"), line("a", "llm"))
	r.append("b.jsonl", line("b", "user"))
	r.onceWithMapper(mapperWithHeader("A"), "A")
	if got := mapIdentityOf(t, r); got != "A" {
		t.Fatalf("a first scan recorded %q as the maps' identity, want A", got)
	}
	stamp := func(id string) time.Time {
		fi, err := os.Stat(filepath.Join(MapsDir(r.data), "claude", "2026", "05", id+".json.gz"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	wroteA := stamp("a")
	os.Remove(filepath.Join(r.proj, "b.jsonl"))
	time.Sleep(10 * time.Millisecond)

	r.onceWithMapper(mapperWithHeader("A"), "A")
	if !stamp("a").Equal(wroteA) {
		t.Fatal("a map of the same options was written again")
	}

	o := r.opts(true)
	o.Mapper, o.MapIdentity = mapperWithHeader("B"), "B"
	d := New(o)
	if err := d.Run(t0ctx()); err != nil {
		t.Fatal(err)
	}
	if d.sessions["claude/a"] != nil {
		t.Error("the rewrite kept in memory a session it took up (a scan's rewrite holds one slice of them at a time)")
	}
	for _, id := range []string{"a", "b"} {
		if m := r.mapOf(id); !strings.HasPrefix(m, "B\n") {
			t.Fatalf("map of %s after the options changed:\n%s", id, m)
		}
	}
	if got := mapIdentityOf(t, r); got != "B" {
		t.Fatalf("identity %q after the rewrite, want B", got)
	}
	wroteB := stamp("a")
	time.Sleep(10 * time.Millisecond)
	r.onceWithMapper(mapperWithHeader("B"), "B")
	if !stamp("a").Equal(wroteB) {
		t.Fatal("written again by a scan of the same options")
	}
}

// A daemon that follows writes every map again after its first catch-up
// when the maps were written with other options, and again when a reload
// brings other options; status tells the rewrite while it runs.
func TestFollowingDaemonWritesAgainTheMapsOfOtherOptions(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", line("a", "user"))
	r.append("c.jsonl", line("c", "user"))
	past := time.Now().Add(-2 * time.Hour)
	for _, name := range []string{"a.jsonl", "c.jsonl"} {
		os.Chtimes(filepath.Join(r.proj, name), past, past)
	}
	r.onceWithMapper(mapperWithHeader("A"), "A")

	o := r.opts(false)
	o.Control, o.RetireAfter = true, time.Nanosecond // sessions let go of: taken up one by one
	o.Mapper, o.MapIdentity = mapperWithHeader("B"), "B"
	f := startFollowing(t, r, o)
	defer f.stop()
	f.waitMap("a", "B\n"+fakeMap(map[string][]string{"": {"user"}}))
	f.waitMap("c", "B\n"+fakeMap(map[string][]string{"": {"user"}}))

	reloaded := time.Now()
	f.d.Reconfigure(Live{Roots: o.Roots, Mapper: mapperWithHeader("C"), MapIdentity: "C"})
	f.waitMap("a", "C\n"+fakeMap(map[string][]string{"": {"user"}}))
	f.waitMap("c", "C\n"+fakeMap(map[string][]string{"": {"user"}}))
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, err := f.client().Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// A status published after the reload's maps were written (the
		// one before, of the first rewrite ended, says no rewrite too).
		if st.Rewrite == nil && st.LastFlush.After(reloaded) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a rewrite still under way: %+v", st.Rewrite)
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.stop()
	if got := mapIdentityOf(t, r); got != "C" {
		t.Fatalf("identity %q after the reload's rewrite, want C", got)
	}
}

// A map that cannot be written with the new options (its events cannot be
// read back) ends the scan with an error, not a rewrite begun again for
// ever, and no identity is recorded: the maps are of two options now, and
// the next scan writes them all again, with the first options too.
func TestScanWithAMapItCannotWriteAgainEnds(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", line("a", "user"))
	r.append("b.jsonl", line("b", "user"))
	r.onceWithMapper(mapperWithHeader("A"), "A")
	defer func() { eventsReadFault = nil }()
	eventsReadFault = func(key string, _ []*state.Source) error {
		if key == "claude/b" {
			return errors.New("an I/O error")
		}
		return nil
	}
	o := r.opts(true)
	o.Mapper, o.MapIdentity = mapperWithHeader("B"), "B"
	done := make(chan error, 1)
	go func() { done <- New(o).Run(t0ctx()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "could not be written") {
			t.Fatalf("scan with a map it could not write: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the scan did not end")
	}
	if got := mapIdentityOf(t, r); got != "" {
		t.Fatalf("identity %q recorded though the maps are of two options now", got)
	}
	if m := r.mapOf("a"); !strings.HasPrefix(m, "B\n") {
		t.Fatalf("map of a after the failed rewrite:\n%s", m)
	}
	eventsReadFault = nil
	// Back to the first options: a's map, written with the others in
	// between, is written again.
	r.onceWithMapper(mapperWithHeader("A"), "A")
	if m := r.mapOf("a"); !strings.HasPrefix(m, "A\n") || mapIdentityOf(t, r) != "A" {
		t.Fatalf("after a scan back with the first options: identity %q, map of a:\n%s", mapIdentityOf(t, r), m)
	}
}

// A rewrite for other options passes over a session whose map was written
// with them already (read again after an upgrade, changed since): built
// once, not twice.
func TestRewritePassesOverMapsWrittenWithItsOptions(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", line("a", "user"))
	r.append("b.jsonl", line("b", "user"))
	r.onceWithMapper(mapperWithHeader("A"), "A")
	r.append("a.jsonl", line("a", "llm"))
	var mu sync.Mutex
	builds := map[string]int{}
	counting := func(events []event.Event) (Built, error) {
		b, err := mapperWithHeader("B")(events)
		mu.Lock()
		builds[b.NativeID]++
		mu.Unlock()
		return b, err
	}
	r.onceWithMapper(counting, "B")
	if builds["a"] != 1 || builds["b"] != 1 {
		t.Fatalf("maps built by the scan with other options: %v; want a once (it changed) and b once (the rewrite)", builds)
	}
	if !strings.HasPrefix(r.mapOf("a"), "B\n") || !strings.HasPrefix(r.mapOf("b"), "B\n") || mapIdentityOf(t, r) != "B" {
		t.Fatalf("after the scan: identity %q, maps\n%s\n%s", mapIdentityOf(t, r), r.mapOf("a"), r.mapOf("b"))
	}
}

// A rewrite of every map says so once in the log, at its end, with what it
// changed; its maps are not a line each at info (an upgrade rewrites tens
// of thousands, whose lines would push the start and the errors out of a
// capped log file).
func TestRewriteLogsOnceAtItsEnd(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", line("a", "user"), line("a", "llm"))
	r.append("b.jsonl", line("b", "user"))
	r.onceWithMapper(mapperWithHeader("A"), "A")
	var logged bytes.Buffer
	o := r.opts(true)
	o.Mapper, o.MapIdentity = mapperWithHeader("B"), "B"
	o.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := New(o).Run(t0ctx()); err != nil {
		t.Fatal(err)
	}
	out := logged.String()
	if strings.Contains(out, `msg="map written"`) || strings.Count(out, `msg="every map written again"`) != 1 ||
		!strings.Contains(out, "changed=2 up_to_date=0 failed=0 complete=true") {
		t.Errorf("the log of a rewrite:\n%s", out)
	}
}
