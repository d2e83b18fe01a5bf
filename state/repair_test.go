package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/agentmap/agentmap/builder/event"
)

// fill commits a few sources and sessions, with events, and closes.
func fill(t *testing.T, path string) {
	t.Helper()
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := uint64(1); i <= 40; i++ {
		key := "claude/s" + string(rune('a'+i%5))
		src := &Source{ID: i, Path: "/logs/f.jsonl", Agent: "claude", Form: "lines", Session: key, Offset: 100}
		sess := &Session{Key: key, Agent: "claude", Gen: i}
		evs := make([]event.Event, 50)
		for j := range evs {
			evs[j] = event.Event{Kind: event.KindUser, T: int64(j), User: &event.User{Chars: j}}
		}
		if err := d.Commit(Batch{Source: src, Carry: []byte(`{"c":1}`), SetCarry: true, Events: evs, Sessions: []*Session{sess}}); err != nil {
			t.Fatal(err)
		}
	}
}

// A file cut to any number of its pages opens without a panic, moved
// aside, as an empty database.
func TestCutStateOpensEmpty(t *testing.T) {
	src := filepath.Join(t.TempDir(), "state.db")
	fill(t, src)
	raw, _ := os.ReadFile(src)
	for pages := 0; pages <= 16 && pages*4096 < len(raw); pages++ {
		path := filepath.Join(t.TempDir(), "state.db")
		os.WriteFile(path, raw[:pages*4096], 0o600)
		d, err := Open(path, nil)
		if err != nil {
			t.Fatalf("cut to %d pages: %v", pages, err)
		}
		srcs, _, err := d.Load()
		if err != nil {
			t.Fatalf("cut to %d pages: load: %v", pages, err)
		}
		if pages >= 2 && (d.Repaired().Aside == "" || len(srcs) != 0) {
			t.Errorf("cut to %d pages: not moved aside (%+v, %d sources)", pages, d.Repaired(), len(srcs))
		}
		// The reason says what is wrong, not the fault bbolt met.
		if r := d.Repaired(); pages >= 2 && (!strings.Contains(r.Reason, "cut short") || strings.Contains(r.Reason, "runtime error")) {
			t.Errorf("cut to %d pages: reason %q", pages, r.Reason)
		}
		d.Close()
	}
}

// poke rewrites one stored value with bbolt directly.
func poke(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	db.Close()
}

// A damaged value costs only the sources it concerns: their records,
// carry-state and events go, everything else stays.
func TestDamagedRecordsDropTheirSources(t *testing.T) {
	for name, damage := range map[string]func(tx *bolt.Tx) error{
		"event batch": func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketEvents).Bucket([]byte("claude/sb"))
			k, v := b.Cursor().First()
			v = append([]byte(nil), v...)
			copy(v[10:], "garbage")
			return b.Put(k, v)
		},
		"source record": func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketSources)
			v := append([]byte(nil), b.Get(idKey(1))...)
			v[3] ^= 1
			return b.Put(idKey(1), v)
		},
		"carry": func(tx *bolt.Tx) error {
			return tx.Bucket(bucketCarry).Put(idKey(1), []byte("x\x00c\x00\x00\x00\x00"))
		},
		"session record": func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketSessions)
			v := append([]byte(nil), b.Get([]byte("claude/sb"))...)
			v[1] ^= 0x20
			return b.Put([]byte("claude/sb"), v)
		},
		"nested bucket name": func(tx *bolt.Tx) error {
			evB := tx.Bucket(bucketEvents)
			old := evB.Bucket([]byte("claude/sb"))
			nb, err := evB.CreateBucket([]byte("claude/sB"))
			if err != nil {
				return err
			}
			old.ForEach(func(k, v []byte) error { return nb.Put(k, v) })
			return evB.DeleteBucket([]byte("claude/sb"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			fill(t, path)
			poke(t, path, damage)
			d, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			rep := d.Repaired()
			if rep.Aside != "" || rep.Sources == 0 || rep.Sources > 8 {
				t.Fatalf("repair %+v", rep)
			}
			srcs, _, err := d.Load()
			if err != nil {
				t.Fatal(err)
			}
			if len(srcs) != 40-rep.Sources {
				t.Errorf("%d sources left, %d forgotten", len(srcs), rep.Sources)
			}
			kept := map[uint64]bool{}
			for _, s := range srcs {
				kept[s.ID] = true
			}
			for _, key := range []string{"claude/sa", "claude/sb", "claude/sc", "claude/sd", "claude/se"} {
				if err := d.Events(key, func(src uint64, evs []event.Event) error {
					if !kept[src] {
						t.Errorf("events of forgotten source %d left under %s", src, key)
					}
					if len(evs) != 50 {
						t.Errorf("source %d: %d events", src, len(evs))
					}
					return nil
				}); err != nil {
					t.Errorf("%s: %v", key, err)
				}
			}
			d.Close()
			// The repair is done once: a second open finds nothing.
			d2, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r := d2.Repaired(); r.Happened() {
				t.Errorf("second open repaired again: %+v", r)
			}
			d2.Close()
		})
	}
}

// A flipped byte in the source id of an event batch's key leaves a key
// that names no source, and the batch's own source short of it: with
// other batches still stored, only reading its session's sources again
// keeps its map from missing those events.
func TestDamagedBatchKeyForgetsItsSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	fill(t, path)
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := &Source{ID: 6, Path: "/logs/f.jsonl", Agent: "claude", Form: "lines", Session: "claude/sb", Offset: 200, NextSeq: 2}
	evs := []event.Event{{Kind: event.KindUser, T: 99, User: &event.User{Chars: 1}}}
	if err := d.Commit(Batch{Source: src, Seq: 1, Carry: []byte(`{"c":2}`), SetCarry: true, Events: evs}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	poke(t, path, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEvents).Bucket([]byte("claude/sb"))
		k := eventKey(6, 0)
		v := append([]byte(nil), b.Get(k)...)
		if v == nil {
			return fmt.Errorf("no batch 6/0")
		}
		if err := b.Delete(k); err != nil {
			return err
		}
		k[0] ^= 0x40
		return b.Put(k, v)
	})
	d, srcs := openLoaded(t, path)
	for _, s := range srcs {
		if s.Session == "claude/sb" {
			t.Errorf("source %d of the damaged session kept (cursor %d), repair %+v", s.ID, s.Offset, d.Repaired())
		}
	}
}

// Damage met while running is an error naming the session and source,
// never a panic.
func TestDamagedBatchWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	fill(t, path)
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEvents).Bucket([]byte("claude/sc"))
		k, v := b.Cursor().First()
		v = append([]byte(nil), v...)
		v[len(v)/2] ^= 4
		return b.Put(k, v)
	})
	err = d.Events("claude/sc", func(uint64, []event.Event) error { return nil })
	var de *DamagedError
	if !errors.As(err, &de) || de.Session != "claude/sc" || len(de.Sources) != 1 || !errors.Is(err, ErrDamaged) {
		t.Fatalf("err = %v", err)
	}
	var left int
	srcs, _, _ := d.Load()
	for _, s := range srcs {
		if s.ID == de.Sources[0] {
			if err := d.ForgetSources([]*Source{s}); err != nil {
				t.Fatal(err)
			}
		} else if s.Session == "claude/sc" {
			left++
		}
	}
	n := 0
	if err := d.Events("claude/sc", func(uint64, []event.Event) error { n++; return nil }); err != nil || n != left {
		t.Fatalf("after forgetting: %d sources, want %d, %v", n, left, err)
	}
}

// A source reset to nothing (its log emptied) or to a file that gave no
// events keeps no events, and is no damage: the reset counts its batches
// from 0 again, and a record written before that did (batches counted,
// nothing consumed) is not taken for damage either.
func TestResetToNoEventsIsNoDamage(t *testing.T) {
	for _, c := range []struct {
		name   string
		offset int64
		oldSeq bool // written by a version that kept NextSeq past a reset
	}{{"emptied", 0, false}, {"no events", 120, false}, {"emptied, older record", 0, true}} {
		t.Run(c.name, func(t *testing.T) {
			d, path := openTemp(t)
			src := &Source{ID: 3, Path: "/logs/a.jsonl", Agent: "claude", Form: "lines", Session: "claude/s1", Offset: 80}
			sess := &Session{Key: "claude/s1", Agent: "claude", NativeID: "s1", Gen: 1}
			evs := []event.Event{{Kind: event.KindUser, T: 5, User: &event.User{Chars: 3}}}
			if err := d.Commit(Batch{Source: src, Events: evs, Sessions: []*Session{sess}}); err != nil {
				t.Fatal(err)
			}
			src.Offset = c.offset
			if err := d.Commit(Batch{Source: src, Reset: true, ResetSession: src.Session}); err != nil {
				t.Fatal(err)
			}
			if src.NextSeq != 0 {
				t.Fatalf("NextSeq %d after a reset with no events", src.NextSeq)
			}
			if c.oldSeq {
				src.NextSeq = 1
				if err := d.PutSource(src); err != nil {
					t.Fatal(err)
				}
			}
			d2 := reopen(t, d, path)
			if rep := d2.Repaired(); rep.Happened() {
				t.Fatalf("repaired: %+v", rep)
			}
			if srcs, _, err := d2.Load(); err != nil || len(srcs) != 1 {
				t.Fatalf("sources %d, %v", len(srcs), err)
			}
		})
	}
}

// A file-size limit (ulimit -f: EFBIG) is the system refusing, as a full
// disk is: the database is kept as it is, not moved aside as damaged.
func TestFileSizeLimitIsAFault(t *testing.T) {
	if !IsFault(fmt.Errorf("migrate state: file resize error: truncate: %w", syscall.EFBIG)) {
		t.Error("EFBIG taken for damage")
	}
	// As bbolt words it: the system's text, not its error.
	if !IsFault(fmt.Errorf("migrate state: %w", fmt.Errorf("file resize error: %s", fmt.Errorf("truncate x: %w", syscall.EFBIG)))) {
		t.Error("bbolt's resize error taken for damage")
	}
	if IsFault(errors.New("invalid database")) {
		t.Error("damage taken for a fault")
	}
}
