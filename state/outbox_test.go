package state

import (
	"testing"
	"time"
)

func flushed(key, path, sha string, at int64) *Session {
	return &Session{Key: key, Agent: "claude", NativeID: key, Gen: 1,
		Flush: &Flush{Path: path, SHA256: sha, Gen: 1, AtMs: at}}
}

func keysOf(qs []Queued) []string {
	var out []string
	for _, q := range qs {
		out = append(out, q.Key+"@"+q.SHA256)
	}
	return out
}

func TestOutboxQueuesFlushesWithTheirRecord(t *testing.T) {
	d, _ := openTemp(t)
	// Before the sink is enabled nothing is queued; enabling queues the
	// history, oldest flush first.
	if err := d.PutSessions(flushed("b", "b.json.gz", "h1", 20), flushed("a", "a.json.gz", "h1", 10)); err != nil {
		t.Fatal(err)
	}
	ob := d.Outbox("postgres")
	st, err := ob.Enable(time.Now())
	if err != nil || len(st.DeviceID) != 36 {
		t.Fatalf("enable: %+v %v", st, err)
	}
	qs, _ := ob.Take(10)
	if got := keysOf(qs); len(got) != 2 || got[0] != "a@h1" || got[1] != "b@h1" {
		t.Fatalf("queue after enable: %v", got)
	}
	// A session record written again with the same map (an end flag)
	// queues nothing new; a new version replaces the entry and goes last.
	if err := d.PutSessions(flushed("a", "a.json.gz", "h1", 30)); err != nil {
		t.Fatal(err)
	}
	if err := d.PutSessions(flushed("a", "a.json.gz", "h2", 40)); err != nil {
		t.Fatal(err)
	}
	qs, _ = ob.Take(10)
	if got := keysOf(qs); len(got) != 2 || got[0] != "b@h1" || got[1] != "a@h2" {
		t.Fatalf("queue after a new version: %v", got)
	}
	stats, _ := ob.Stats()
	if stats.Len != 2 || stats.Oldest == nil || stats.Oldest.Key != "b" {
		t.Fatalf("stats: %+v", stats)
	}
	// Delivering b, and a version of a taken before a newer one was queued,
	// leaves only the newer a.
	taken := qs
	if err := d.PutSessions(flushed("a", "a.json.gz", "h3", 50)); err != nil {
		t.Fatal(err)
	}
	st.Retracted = 2
	if err := ob.Ack([]Delivered{{Key: taken[0].Key, Seq: taken[0].Seq, SHA256: "h1"}, {Key: taken[1].Key, Seq: taken[1].Seq, SHA256: "h2"}}, st); err != nil {
		t.Fatal(err)
	}
	qs, _ = ob.Take(10)
	if got := keysOf(qs); len(got) != 1 || got[0] != "a@h3" {
		t.Fatalf("queue after acks: %v", got)
	}
	// A delivered content flushed again is not queued again; after a
	// restart (Enable again) neither.
	if err := ob.Ack([]Delivered{{Key: qs[0].Key, Seq: qs[0].Seq, SHA256: "h3"}}, st); err != nil {
		t.Fatal(err)
	}
	d.PutSessions(flushed("b", "b.json.gz", "h1", 60))
	st2, _ := ob.Enable(time.Now())
	if st2.DeviceID != st.DeviceID || st2.Retracted != 2 {
		t.Fatalf("state not kept: %+v", st2)
	}
	if qs, _ = ob.Take(10); len(qs) != 0 {
		t.Fatalf("delivered content queued again: %v", keysOf(qs))
	}
	// Resend queues everything again; Forget drops the queue for good:
	// neither the next flush of another session nor a restart brings it
	// back, and the device id stays.
	if n, err := ob.Resend(time.Now()); err != nil || n != 2 {
		t.Fatalf("resend: %d %v", n, err)
	}
	if n, err := ob.Forget(); err != nil || n != 2 {
		t.Fatalf("forget: %d %v", n, err)
	}
	d.PutSessions(flushed("c", "c.json.gz", "h1", 70))
	st3, _ := ob.Enable(time.Now())
	if st3.DeviceID != st.DeviceID {
		t.Fatal("forget changed the device id")
	}
	if qs, _ = ob.Take(10); len(keysOf(qs)) != 1 || qs[0].Key != "c" {
		t.Fatalf("after forget and restart the queue holds %v", keysOf(qs))
	}
}

func TestOutboxTakeIsBounded(t *testing.T) {
	d, _ := openTemp(t)
	ob := d.Outbox("postgres")
	if _, err := ob.Enable(time.Now()); err != nil {
		t.Fatal(err)
	}
	var ss []*Session
	for i := range 500 {
		k := string(rune('a'+i%26)) + string(rune('a'+i/26))
		ss = append(ss, flushed(k, k+".json.gz", "h", int64(i)))
	}
	if err := d.PutSessions(ss...); err != nil {
		t.Fatal(err)
	}
	qs, _ := ob.Take(100)
	if len(qs) != 100 || qs[0].Key != ss[0].Key {
		t.Fatalf("take 100 of 500: %d, first %s", len(qs), qs[0].Key)
	}
	if stats, _ := ob.Stats(); stats.Len != 500 {
		t.Fatalf("len %d", stats.Len)
	}
}
