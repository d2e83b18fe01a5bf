package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/agentmap/agentmap/builder/event"
)

// randomState commits sessions of one to four sources each, some of them
// with no event yet, some reset to nothing, and one routed to no session.
func randomState(t *testing.T, path string, r *rand.Rand) {
	t.Helper()
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	id := uint64(0)
	for s := 0; s < 12; s++ {
		key := fmt.Sprintf("claude/s%02d", s)
		for n := 1 + r.IntN(4); n > 0; n-- {
			id++
			src := &Source{ID: id, Path: fmt.Sprintf("/logs/%d.jsonl", id), Agent: "claude", Form: "lines", Session: key, Offset: 100}
			b := Batch{Source: src, Carry: []byte(`{"c":1}`), SetCarry: true, Sessions: []*Session{{Key: key, Agent: "claude", Gen: id}}}
			if r.IntN(5) > 0 {
				for j := 1 + r.IntN(3); j > 0; j-- {
					b.Events = append(b.Events, event.Event{Kind: event.KindUser, T: int64(j), User: &event.User{Chars: j}})
				}
			}
			for batches := 1 + r.IntN(3); batches > 0; batches-- {
				if err := d.Commit(b); err != nil {
					t.Fatal(err)
				}
				b.Sessions, b.SetCarry = nil, false
			}
			if r.IntN(8) == 0 { // reset to nothing: batches counted, none due
				src.Offset, src.Digest = 0, ""
				if err := d.Commit(Batch{Source: src, Reset: true, ResetSession: key}); err != nil {
					t.Fatal(err)
				}
				// as an older build's reset left it: batches counted
				src.NextSeq = 2
				if err := d.Commit(Batch{Source: src}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	id++
	if err := d.Commit(Batch{Source: &Source{ID: id, Path: "/logs/lone.jsonl", Agent: "claude", Form: "lines"}}); err != nil {
		t.Fatal(err)
	}
}

// randomDamage does one of the kinds of damage repairRecords knows, to a
// record picked at random.
func randomDamage(tx *bolt.Tx, r *rand.Rand) error {
	pick := func(b *bolt.Bucket) (k, v []byte) {
		var keys [][]byte
		if b == nil {
			return nil, nil
		}
		b.ForEach(func(k, _ []byte) error { keys = append(keys, append([]byte(nil), k...)); return nil })
		if len(keys) == 0 {
			return nil, nil
		}
		k = keys[r.IntN(len(keys))]
		return k, append([]byte(nil), b.Get(k)...)
	}
	flip := func(v []byte) []byte {
		if len(v) > 0 {
			v[r.IntN(len(v))] ^= byte(1 + r.IntN(255))
		}
		return v
	}
	flipOne := func(b *bolt.Bucket) error {
		k, v := pick(b)
		return b.Put(k, flip(v))
	}
	srcB, sessB, carryB, evB := tx.Bucket(bucketSources), tx.Bucket(bucketSessions), tx.Bucket(bucketCarry), tx.Bucket(bucketEvents)
	name, _ := pick(evB)
	nb := evB.Bucket(name)
	if nb == nil || nb.Stats().KeyN == 0 {
		return nil // (a plain value or an emptied session: damage one next time)
	}
	switch r.IntN(11) {
	case 0:
		return flipOne(srcB)
	case 1:
		return flipOne(sessB)
	case 2:
		k, _ := pick(sessB)
		return sessB.Delete(k)
	case 3:
		return flipOne(carryB)
	case 4:
		return flipOne(nb)
	case 5: // a batch key's source id changed
		k, v := pick(nb)
		if err := nb.Delete(k); err != nil {
			return err
		}
		k[r.IntN(8)] ^= 1
		return nb.Put(k, v)
	case 6: // every batch of one source gone
		k, _ := pick(nb)
		var gone [][]byte
		nb.ForEach(func(b, _ []byte) error {
			if string(b[:8]) == string(k[:8]) {
				gone = append(gone, append([]byte(nil), b...))
			}
			return nil
		})
		for _, g := range gone {
			if err := nb.Delete(g); err != nil {
				return err
			}
		}
		return nil
	case 7: // a key of the wrong length
		k, v := pick(nb)
		return nb.Put(append(k[:8:8], 0), v)
	case 8: // a nested bucket where a session record was
		k, _ := pick(sessB)
		if err := sessB.Delete(k); err != nil {
			return err
		}
		_, err := sessB.CreateBucket(k)
		return err
	case 9: // a session's events under another name
		moved, err := evB.CreateBucketIfNotExists(append(append([]byte(nil), name...), 'x'))
		if err != nil {
			return err
		}
		nb.ForEach(func(k, v []byte) error { return moved.Put(k, v) })
		return evB.DeleteBucket(name)
	default: // a plain value among the sessions' event buckets
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], r.Uint64())
		return evB.Put(k[:], []byte("x"))
	}
}

// The open check counts damage exactly as the repair it stands for:
// over databases with one to three random damages each, the same records
// and sources, and no damage where the repair finds none.
func TestFindDamageCountsAsRepairDoes(t *testing.T) {
	damaged := 0
	for seed := uint64(1); seed <= 150; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		path := filepath.Join(t.TempDir(), "state.db")
		randomState(t, path, r)
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if seed%10 != 0 { // one in ten stays clean
			for n := 1 + r.IntN(3); n > 0; n-- {
				// (damage to a record an earlier one made a bucket of is no damage)
				if err := db.Update(func(tx *bolt.Tx) error { return randomDamage(tx, r) }); err != nil && !errors.Is(err, bolt.ErrIncompatibleValue) {
					t.Fatalf("seed %d: damage: %v", seed, err)
				}
			}
		}
		var found, counted Repair
		if err := db.View(func(tx *bolt.Tx) error {
			var err error
			if found, err = findDamage(tx, &mappedReader{}); err != nil {
				return err
			}
			counted, err = repairRecords(tx, false, &mappedReader{})
			return err
		}); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		db.Close()
		if found != counted {
			t.Errorf("seed %d: the open check found %+v, the repair counts %+v", seed, found, counted)
		}
		if counted.Happened() {
			damaged++
		}
	}
	t.Logf("%d of 150 databases damaged", damaged)
	if damaged < 100 {
		t.Errorf("only %d of 150 databases damaged: the test damages too little to compare", damaged)
	}
}
