package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state/mapstore"
)

// flush --all --rewrite counts the maps, not the sessions: one whose
// events make no map is flushed with the others but is in no count, and
// a map that is the same bytes again is counted as up to date.
func TestRewriteCountsOnlyMaps(t *testing.T) {
	r := newRig(t)
	opt := r.opts(false)
	opt.Control = true
	opt.ExcludeKey = "none" // so that the reload below takes none up again
	mapper := func(prefix string) Mapper {
		return func(evs []event.Event) (Built, error) {
			b, err := fakeMapper(evs)
			if strings.HasPrefix(b.NativeID, "nomap") {
				return Built{}, builder.ErrEmptySession
			}
			b.Gzip = append([]byte(prefix), b.Gzip...)
			return b, err
		}
	}
	opt.Mapper = mapper("v1\n")
	d := New(opt)
	stop := follow(t, d)
	defer stop()
	for _, s := range []string{"m1", "m2", "nomap1"} {
		r.append(s+".jsonl", line(s, "user"))
	}
	c := connectWhenMapped(t, r, "m1", "m2")
	deadline := time.Now().Add(20 * time.Second)
	res, err := c.Rewrite(context.Background())
	if err != nil || res.Rewritten != 2 || res.Current != 2 || len(res.Failed) != 0 {
		t.Fatalf("rewrite with the same options: %+v %v; want 2 maps, both up to date", res, err)
	}
	// New options: m1, named, is written with them once they apply (the
	// loop takes them up between requests), and m2 is left to the rewrite.
	d.Reconfigure(Live{Idle: r.idle, Roots: opt.Roots, ExcludeKey: "none", Mapper: mapper("v2\n")})
	for !strings.HasPrefix(r.mapOf("m1"), "v2\n") {
		if _, err := c.Flush(context.Background(), "m1", false); err != nil || time.Now().After(deadline) {
			t.Fatalf("m1 not written with the new options: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, err = c.Rewrite(context.Background())
	if err != nil || res.Rewritten != 2 || res.Current != 1 || len(res.Failed) != 0 {
		t.Fatalf("rewrite with new options: %+v %v; want 2 maps, one written again", res, err)
	}
	for _, s := range []string{"m1", "m2"} {
		if got := r.mapOf(s); !strings.HasPrefix(got, "v2\n") {
			t.Errorf("%s not written again: %q", s, got)
		}
	}
}

// A map file damaged on disk after it was written (a disk error, an edit)
// has the record of a map up to date: a flush asked for by name, and a
// rewrite of every map, read it back and write it again; a flush of what
// changed (--all) does not read it.
func TestDamagedMapWrittenAgainWhenAskedFor(t *testing.T) {
	r := newRig(t)
	opt := r.opts(false)
	opt.Control = true
	d := New(opt)
	stop := follow(t, d)
	defer stop()
	for _, s := range []string{"m1", "m2"} {
		r.append(s+".jsonl", line(s, "user"))
	}
	c := connectWhenMapped(t, r, "m1", "m2")
	want := r.mapOf("m1")
	damage := func(id string) {
		t.Helper()
		path := filepath.Join(r.store.Root, mapstore.RelPath("claude", id, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)))
		if err := os.WriteFile(path, []byte("damaged"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	damage("m1")
	if _, err := c.Flush(context.Background(), "m1", false); err != nil {
		t.Fatal(err)
	}
	if got := r.mapOf("m1"); got != want {
		t.Errorf("flush m1 left the damaged file: %q", got)
	}
	damage("m1")
	if _, err := c.Flush(context.Background(), "", true); err != nil {
		t.Fatal(err)
	}
	if got := r.mapOf("m1"); got != want {
		t.Errorf("flush --all left a map of another size than it was written: %q", got)
	}
	// Of the same size, it is not read back: flush --all does not read
	// every map.
	path := filepath.Join(r.store.Root, mapstore.RelPath("claude", "m1", time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)))
	same := strings.Repeat("x", len(want))
	if err := os.WriteFile(path, []byte(same), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Flush(context.Background(), "", true); err != nil {
		t.Fatal(err)
	}
	if got := r.mapOf("m1"); got != same {
		t.Errorf("flush --all read an up-to-date map back: %q", got)
	}
	if _, err := c.Flush(context.Background(), "m1", false); err != nil || r.mapOf("m1") != want {
		t.Fatalf("flush m1 again: %v", err)
	}
	damage("m2")
	res, err := c.Rewrite(context.Background())
	if err != nil || res.Rewritten != 2 || res.Current != 1 {
		t.Errorf("rewrite: %+v %v; want 2 maps, one of them written again", res, err)
	}
	if got := r.mapOf("m2"); got == "damaged" || got == "" {
		t.Errorf("the rewrite left the damaged file: %q", got)
	}
}

// connectWhenMapped connects to the daemon following r once the maps of
// ids are written and a flush of every session has nothing left to write.
func connectWhenMapped(t *testing.T, r *rig, ids ...string) *Client {
	t.Helper()
	var c *Client
	deadline := time.Now().Add(20 * time.Second)
	for {
		var err error
		if c == nil {
			c, err = Connect(r.data)
		}
		if c != nil {
			var res FlushResult
			if res, err = c.Flush(context.Background(), "", true); err == nil && len(res.Flushed) == 0 &&
				!slices.ContainsFunc(ids, func(id string) bool { return r.mapOf(id) == "" }) {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the maps were not written: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
