package state

import (
	"reflect"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	bolt "go.etcd.io/bbolt"
)

// A tail is kept at its offset, replaced by its source's next one, read
// only at the offset it was kept at, and goes with its source; a damaged
// one is counted and dropped on open, alone.
func TestTails(t *testing.T) {
	d, path := openTemp(t)
	if err := d.PutSessions(&Session{Key: "claude/x", Agent: "claude"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{7, 8} {
		if err := d.PutSource(&Source{ID: id, Path: "/x.jsonl", Agent: "claude", Form: "lines", Session: "claude/x"}); err != nil {
			t.Fatal(err)
		}
	}
	evs := []event.Event{{Kind: "model_request", T: 5}}
	enc := EncodeEvents(evs)
	// Source 9 is recorded nowhere (forgotten since its tail was noted):
	// its tail is not written.
	if err := d.PutTails([]Tail{{Source: 7, At: 100, Encoded: enc}, {Source: 8, At: 10, Encoded: enc}, {Source: 9, At: 1, Encoded: enc}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := d.TailAt(9, 1); ok {
		t.Error("the tail of a source the state does not hold was written")
	}
	if got, ok, err := d.TailAt(7, 100); err != nil || !ok || !reflect.DeepEqual(got, evs) {
		t.Fatalf("TailAt(7, 100) = %v %v %v", got, ok, err)
	}
	if _, ok, _ := d.TailAt(7, 99); ok {
		t.Error("a tail read at another offset")
	}
	later := []event.Event{{Kind: "model_request", T: 9}}
	if err := d.PutTails([]Tail{{Source: 7, At: 150, Encoded: EncodeEvents(later)}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := d.TailAt(7, 100); ok {
		t.Error("the source's earlier tail stayed")
	}
	if got, ok, _ := d.TailAt(7, 150); !ok || !reflect.DeepEqual(got, later) {
		t.Errorf("the newer tail: %v %v", got, ok)
	}
	if got, err := (Tail{Source: 7, At: 150, Encoded: EncodeEvents(later)}).Events(); err != nil || !reflect.DeepEqual(got, later) {
		t.Errorf("Tail.Events = %v %v", got, err)
	}
	if err := d.DeleteSource(&Source{ID: 7, Session: "claude/x"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := d.TailAt(7, 150); ok {
		t.Error("a deleted source's tail stayed")
	}

	// Damage to source 8's tail: counted and dropped when the file is
	// opened again, nothing else forgotten.
	d.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTails)
		k := tailKey(8, 10)
		v := append([]byte(nil), b.Get(k)...)
		v[2] ^= 0xff
		return b.Put(k, v)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	d = reopen(t, d, path)
	if rep := d.Repaired(); rep.Records != 1 || rep.Sources != 0 {
		t.Errorf("repair: %+v", rep)
	}
	if _, ok, err := d.TailAt(8, 10); ok || err != nil {
		t.Errorf("a damaged tail read: %v %v", ok, err)
	}
}
