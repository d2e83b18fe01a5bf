package state

import (
	"path/filepath"
	"slices"
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

// What the exports keep of a forgotten session goes with it, and a sink
// that was sent it (or has it queued) gets a retraction in place of its
// queued send, naming the session id the map was stored under; a session
// the sink never had leaves nothing there.
func TestForgetTakesWhatWasSentAndExported(t *testing.T) {
	d, ob, st, qs := twoQueued(t, "x/a", "x/b")
	// a sent, stored under the id its map names (not the key's).
	if err := ob.Ack([]Delivered{{Key: qs[0].Key, Seq: qs[0].Seq, SHA256: "h1", SessionID: "a-in-the-map"}}, st); err != nil {
		t.Fatal(err)
	}
	if err := d.PutSessions(flushed("x/a", "a.json.gz", "h2", 30)); err != nil { // a queued again
		t.Fatal(err)
	}
	if err := d.CommitExport(ExportState{}, []Exported{{Key: "x/a", Path: "a.json.gz", SHA256: "h1"}, {Key: "x/b", Path: "b.json.gz", SHA256: "h1"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.PutSessions(flushed("x/c", "c.json.gz", "h1", 40)); err != nil {
		t.Fatal(err)
	}
	c, _ := ob.Take(10)
	if err := ob.Ack([]Delivered{{Key: "x/c", Seq: c[len(c)-1].Seq}}, st); err != nil { // c dropped, never stored
		t.Fatal(err)
	}
	if err := d.Forget(Forgotten{Session: "x/a"}, Forgotten{Session: "x/c"}); err != nil {
		t.Fatal(err)
	}
	// A send and an export of a under way when it was forgotten record
	// nothing of it.
	if err := ob.Ack([]Delivered{{Key: "x/a", Seq: qs[0].Seq, SHA256: "h2"}}, st); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitExport(ExportState{}, []Exported{{Key: "x/a", Path: "a.json.gz", SHA256: "h2"}}); err != nil {
		t.Fatal(err)
	}
	qs, _ = ob.Take(10)
	if got := keysOf(qs); len(got) != 2 || got[0] != "x/b@h1" || got[1] != "x/a@" || !qs[1].Retract || qs[1].SessionID != "a-in-the-map" || qs[1].Path != "" {
		t.Fatalf("queue after forgetting a and c: %v %+v", got, qs)
	}
	exported, err := d.ExportedContent()
	if err != nil || len(exported) != 1 || exported["x/b"] == "" {
		t.Errorf("exported after forgetting a: %v %v", exported, err)
	}
	if err := d.view(func(tx *bolt.Tx) error {
		sb := tx.Bucket(bucketOutbox).Bucket([]byte("postgres"))
		if v := sb.Bucket(bucketSent).Get([]byte("x/a")); v != nil {
			t.Errorf("what was sent of a is kept: %q", v)
		}
		if v := sb.Bucket(bucketSentIDs).Get([]byte("x/a")); v != nil {
			t.Errorf("the id a was sent under is kept: %q", v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The retraction delivered, nothing of a is left.
	if err := ob.Ack([]Delivered{{Key: "x/a", Seq: qs[1].Seq}}, st); err != nil {
		t.Fatal(err)
	}
	if stats, _ := ob.Stats(); stats.Len != 1 {
		t.Errorf("outbox holds %d entries after the retraction, want 1", stats.Len)
	}
}

// A session delivered without the id it was stored under (by a build that
// did not keep it) is retracted by its native id; dropping the sink's
// queue (`sink forget`) keeps retractions, which would otherwise leave
// the session in the sink for good.
func TestRetractionWithoutTheStoredID(t *testing.T) {
	d, ob, st, qs := twoQueued(t, "x/d", "x/e")
	if err := ob.Ack([]Delivered{{Key: "x/d", Seq: qs[0].Seq, SHA256: "h1"}}, st); err != nil {
		t.Fatal(err)
	}
	if err := d.Forget(Forgotten{Session: "x/d"}); err != nil {
		t.Fatal(err)
	}
	if n, err := ob.Forget(); err != nil || n != 1 {
		t.Fatalf("sink forget: %d dropped, %v; want e's map alone", n, err)
	}
	qs, _ = ob.Take(10)
	if len(qs) != 1 || !qs[0].Retract || qs[0].Key != "x/d" || qs[0].SessionID != "" || qs[0].Native != "d" {
		t.Fatalf("queue: %+v", qs)
	}
}

// twoQueued keeps two flushed sessions and enables a sink, which queues
// both; it returns the queue as taken.
func twoQueued(t *testing.T, a, b string) (*DB, *Outbox, SinkState, []Queued) {
	t.Helper()
	d, _ := openTemp(t)
	if err := d.PutSessions(flushed(a, a+".json.gz", "h1", 10), flushed(b, b+".json.gz", "h1", 20)); err != nil {
		t.Fatal(err)
	}
	ob := d.Outbox("postgres")
	st, err := ob.Enable(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	qs, err := ob.Take(10)
	if err != nil {
		t.Fatal(err)
	}
	return d, ob, st, qs
}

// A session forgotten while its map was being sent, back before its next
// flush: the send's acknowledgement records nothing (the retraction
// waiting removes what it stored), so its next map, the same content, is
// sent again.
func TestSessionBackWhileItsRetractionWaits(t *testing.T) {
	d, ob, st, qs := twoQueued(t, "x/a", "x/b")
	if err := d.Forget(Forgotten{Session: "x/a"}); err != nil {
		t.Fatal(err)
	}
	if err := d.PutSessions(&Session{Key: "x/a", Agent: "x", NativeID: "a", Gen: 1}); err != nil { // back, not flushed
		t.Fatal(err)
	}
	if err := ob.Ack([]Delivered{{Key: "x/a", Seq: qs[0].Seq, SHA256: "h1", SessionID: "local:x:a"}}, st); err != nil {
		t.Fatal(err)
	}
	qs, _ = ob.Take(10)
	var retraction Queued
	for _, q := range qs {
		if q.Retract {
			retraction = q
		}
	}
	if retraction.Key != "x/a" {
		t.Fatalf("queue: %v", keysOf(qs))
	}
	if err := ob.Ack([]Delivered{{Key: "x/a", Seq: retraction.Seq}}, st); err != nil {
		t.Fatal(err)
	}
	if err := d.PutSessions(flushed("x/a", "x/a.json.gz", "h1", 50)); err != nil {
		t.Fatal(err)
	}
	qs, _ = ob.Take(10)
	if got := keysOf(qs); !slices.Contains(got, "x/a@h1") {
		t.Fatalf("queue after a's next flush: %v; want a's map", got)
	}
}
