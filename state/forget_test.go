package state

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agentmap/agentmap/builder/event"
)

// Forget takes the sessions it is given out of the state whole (records,
// sources, carry-state, events) and leaves every other one as it was.
func TestForgetSessions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	fill(t, path) // sessions claude/sa … claude/se, 8 sources each
	d, srcs := openLoaded(t, path)
	bySession := map[string][]*Source{}
	for _, s := range srcs {
		bySession[s.Session] = append(bySession[s.Session], s)
	}
	gone := []string{"claude/sa", "claude/sc"}
	var forget []Forgotten
	for _, key := range gone {
		forget = append(forget, Forgotten{Session: key, Sources: bySession[key]})
	}
	if err := d.Forget(forget...); err != nil {
		t.Fatal(err)
	}
	srcs, sessions, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]int{}
	for _, s := range srcs {
		left[s.Session]++
	}
	kept := map[string]bool{}
	for _, s := range sessions {
		kept[s.Key] = true
	}
	for _, key := range []string{"claude/sa", "claude/sb", "claude/sc", "claude/sd", "claude/se"} {
		var batches int
		if err := d.Events(key, func(uint64, []event.Event) error { batches++; return nil }); err != nil {
			t.Fatal(err)
		}
		want := len(bySession[key])
		forgotten := key == gone[0] || key == gone[1]
		if forgotten {
			want = 0
		}
		if left[key] != want || batches != want || kept[key] == forgotten {
			t.Errorf("%s: %d sources and %d batches left (want %d), record kept %v", key, left[key], batches, want, kept[key])
		}
		for _, s := range bySession[key] {
			carry, err := d.Carry(s.ID)
			if err != nil || (len(carry) == 0) != forgotten {
				t.Errorf("%s: source %d carry %q, %v", key, s.ID, carry, err)
			}
		}
	}
}

// Forget with OnlySources takes the sources given out of a session and
// keeps the rest of it: its other sources and their events, and its record,
// written as Rewrite has it in the same transaction, as is a parent's.
func TestForgetOnlySomeSources(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	fill(t, path)
	d, srcs := openLoaded(t, path)
	bySession := map[string][]*Source{}
	for _, s := range srcs {
		bySession[s.Session] = append(bySession[s.Session], s)
	}
	_, sessions, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	records := map[string]*Session{}
	for _, s := range sessions {
		records[s.Key] = s
	}
	kept, parent := *records["claude/sb"], *records["claude/sd"]
	kept.Gen, parent.Gen = 41, 42
	leaving := bySession["claude/sb"][:3]
	if err := d.Forget(Forgotten{Session: "claude/sb", Sources: leaving, OnlySources: true,
		Rewrite: []*Session{&kept, &parent}}); err != nil {
		t.Fatal(err)
	}
	srcs, sessions, err = d.Load()
	if err != nil {
		t.Fatal(err)
	}
	left := map[uint64]bool{}
	for _, s := range srcs {
		left[s.ID] = true
	}
	for _, s := range bySession["claude/sb"] {
		gone := s.ID == leaving[0].ID || s.ID == leaving[1].ID || s.ID == leaving[2].ID
		carry, _ := d.Carry(s.ID)
		if left[s.ID] == gone || (len(carry) == 0) != gone {
			t.Errorf("source %d: record kept %v, carry %q; want gone %v", s.ID, left[s.ID], carry, gone)
		}
	}
	var batches int
	if err := d.Events("claude/sb", func(src uint64, _ []event.Event) error {
		for _, s := range leaving {
			if s.ID == src {
				t.Errorf("events of source %d left", src)
			}
		}
		batches++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := len(bySession["claude/sb"]) - len(leaving); batches != want {
		t.Errorf("%d batches of claude/sb left, want %d", batches, want)
	}
	gens := map[string]uint64{}
	for _, s := range sessions {
		gens[s.Key] = s.Gen
	}
	if len(sessions) != 5 || gens["claude/sb"] != 41 || gens["claude/sd"] != 42 || gens["claude/sa"] != records["claude/sa"].Gen {
		t.Errorf("sessions after: %v", gens)
	}
}

// openLoaded opens the state database at path for the test, with the
// sources it loads.
func openLoaded(t *testing.T, path string) (*DB, []*Source) {
	t.Helper()
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	srcs, _, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	return d, srcs
}

// What the sinks' outboxes and the exports keep of a forgotten session
// goes with it: its queued send, what was sent, what was exported.
func TestForgetTakesWhatWasSentAndExported(t *testing.T) {
	d, _ := openTemp(t)
	if err := d.PutSessions(flushed("a", "a.json.gz", "h1", 10), flushed("b", "b.json.gz", "h1", 20)); err != nil {
		t.Fatal(err)
	}
	ob := d.Outbox("postgres")
	st, err := ob.Enable(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	qs, _ := ob.Take(10)
	if err := ob.Ack([]Delivered{{qs[0].Key, qs[0].Seq, "h1"}}, st); err != nil { // a sent
		t.Fatal(err)
	}
	if err := d.PutSessions(flushed("a", "a.json.gz", "h2", 30)); err != nil { // a queued again
		t.Fatal(err)
	}
	if err := d.CommitExport(ExportState{}, []Exported{{Key: "a", Path: "a.json.gz", SHA256: "h1"}, {Key: "b", Path: "b.json.gz", SHA256: "h1"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Forget(Forgotten{Session: "a"}); err != nil {
		t.Fatal(err)
	}
	// A send and an export of a under way when it was forgotten record
	// nothing of it.
	if err := ob.Ack([]Delivered{{"a", qs[0].Seq, "h2"}}, st); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitExport(ExportState{}, []Exported{{Key: "a", Path: "a.json.gz", SHA256: "h2"}}); err != nil {
		t.Fatal(err)
	}
	qs, _ = ob.Take(10)
	if got := keysOf(qs); len(got) != 1 || got[0] != "b@h1" {
		t.Errorf("queue after forgetting a: %v", got)
	}
	if stats, _ := ob.Stats(); stats.Len != 1 {
		t.Errorf("outbox holds %d entries, want 1", stats.Len)
	}
	exported, err := d.ExportedContent()
	if err != nil || len(exported) != 1 || exported["b"] == "" {
		t.Errorf("exported after forgetting a: %v %v", exported, err)
	}
	if err := d.view(func(tx *bolt.Tx) error {
		sb := tx.Bucket(bucketOutbox).Bucket([]byte("postgres"))
		if v := sb.Bucket(bucketSent).Get([]byte("a")); v != nil {
			t.Errorf("what was sent of a is kept: %q", v)
		}
		sb.Bucket(bucketQueue).ForEach(func(k, v []byte) error {
			if string(v) == "a" {
				t.Errorf("a is still in the queue")
			}
			return nil
		})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
