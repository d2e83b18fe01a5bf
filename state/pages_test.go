package state

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/agentmap/agentmap/builder/event"
)

// fillDeep is fill with trees deep enough to have branch pages, nested
// buckets of one leaf and of many, and a batch that overflows its page.
func fillDeep(t *testing.T, path string) (raw []byte, pageSize int) {
	t.Helper()
	fill(t, path)
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(100); i < 400; i++ {
		key := fmt.Sprintf("codex/%03d", i%60)
		n := 3
		if i == 150 {
			n = 900 // several pages long
		}
		evs := make([]event.Event, n)
		for j := range evs {
			evs[j] = event.Event{Kind: event.KindUser, T: int64(j), User: &event.User{Chars: j}}
		}
		src := &Source{ID: i, Path: "/logs/r.jsonl", Agent: "codex", Form: "lines", Session: key, Offset: 10}
		if err := d.Commit(Batch{Source: src, Events: evs, Sessions: []*Session{{Key: key, Agent: "codex", Gen: i}}}); err != nil {
			t.Fatal(err)
		}
	}
	pageSize = d.db.Info().PageSize
	d.Close()
	raw, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw, pageSize
}

// pagesOf returns the ids of the pages of the file with the given flags.
func pagesOf(raw []byte, pageSize int, flags uint16) []uint64 {
	var ids []uint64
	for off := 0; off+pageSize <= len(raw); off += pageSize {
		if pageFlags(raw[off:]) == flags && ne.Uint64(raw[off:]) == uint64(off/pageSize) {
			ids = append(ids, uint64(off/pageSize))
		}
	}
	return ids
}

// walkAll reads every key and value of every bucket, as the daemon's
// reads and the repair do.
func walkAll(tx *bolt.Tx) error {
	var walk func(b *bolt.Bucket, depth int) error
	walk = func(b *bolt.Bucket, depth int) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				if nb := b.Bucket(k); nb != nil {
					return walk(nb, depth+1)
				}
			}
			return nil
		})
	}
	return tx.ForEach(func(name []byte, b *bolt.Bucket) error { return walk(b, 0) })
}

// A file the page walk passes is one bbolt's own check passes too, and
// one that every bucket can be read from: the walk misses nothing that
// check finds. Both run here only because the walk ran first; alone, the
// check would crash the test on some of these files.
func TestPageWalkCoversBoltCheck(t *testing.T) {
	src := filepath.Join(t.TempDir(), "state.db")
	clean, pageSize := fillDeep(t, src)
	if len(pagesOf(clean, pageSize, flagBranch)) == 0 {
		t.Fatal("the fixture has no branch page")
	}
	seed := rand.Uint64()
	if v, err := strconv.ParseUint(os.Getenv("AGENTMAP_PAGES_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("%d bytes, seed %d", len(clean), seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	var refused, caught, passed, churned int
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, clean, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := range 2000 {
		// Half of the flips land in page headers and element tables,
		// where structure lives; the rest anywhere.
		off := rng.IntN(len(clean))
		if i%2 == 0 {
			off = off/pageSize*pageSize + rng.IntN(pageHeaderLen+8*elementLen)
		}
		if _, err := f.WriteAt([]byte{clean[off] ^ byte(1+rng.IntN(255))}, int64(off)); err != nil {
			t.Fatal(err)
		}
		func() {
			db, file, err := boltOpen(path)
			if err != nil {
				if errors.Is(err, bolt.ErrTimeout) {
					t.Fatalf("byte %d flipped: %v", off, err)
				}
				refused++
				return
			}
			d := newDB(db, file, path)
			defer d.closeQuietly()
			if err := d.checkStructure(); err != nil {
				caught++
				return
			}
			passed++
			if err := d.view(func(tx *bolt.Tx) error {
				for err := range tx.Check() {
					return fmt.Errorf("bbolt check: %w", err)
				}
				return walkAll(tx)
			}); err != nil {
				t.Errorf("byte %d flipped: the page walk passed, yet %v", off, err)
			}
			if i%5 == 1 {
				d.closeQuietly()
				if err := churnsSoundly(t, path); err != nil {
					t.Errorf("byte %d flipped: the page walk passed, yet after writing: %v", off, err)
				}
				churned++
			}
		}()
		if _, err := f.WriteAt(clean[off:off+1], int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(clean)) {
		t.Fatalf("the file changed size: %v", err)
	}
	t.Logf("2000 flips: %d refused by bbolt at open, %d caught by the page walk, %d passed both (%d of them written to)",
		refused, caught, passed, churned)
	if caught == 0 {
		t.Error("the page walk caught nothing")
	}
}

// churnsSoundly opens a copy of the file as the daemon does (repairing
// it), writes to every bucket as the daemon would, first keys of pages
// included, and checks the structure bbolt leaves.
func churnsSoundly(t *testing.T, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	scratch := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(scratch, raw, 0o600); err != nil {
		return err
	}
	d, err := Open(scratch, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	d.db.NoSync = true // a scratch file: its durability is not the question
	if err := d.update(func(tx *bolt.Tx) error {
		var churn func(b *bolt.Bucket) error
		churn = func(b *bolt.Bucket) error {
			var keys, nested [][]byte
			if err := b.ForEach(func(k, v []byte) error {
				if v == nil {
					nested = append(nested, bytes.Clone(k))
				} else if len(keys) < 3 {
					keys = append(keys, bytes.Clone(k))
				}
				return nil
			}); err != nil {
				return err
			}
			for _, k := range keys {
				if err := b.Delete(k); err != nil {
					return err
				}
				if err := b.Put(append(k, 'x'), bytes.Repeat([]byte("v"), 300)); err != nil {
					return err
				}
			}
			for _, k := range nested {
				nb := b.Bucket(k)
				if nb == nil {
					return fmt.Errorf("bucket %q is listed and cannot be opened", k)
				}
				if err := churn(nb); err != nil {
					return err
				}
			}
			if len(nested) > 0 {
				return b.DeleteBucket(nested[0])
			}
			return nil
		}
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return churn(b) })
	}); err != nil {
		return err
	}
	return d.checkStructure()
}

// A branch that points at itself, or at a page far past the file, is
// damage to the structure: an error for a reader, moved aside by the
// daemon, never a hang or a fault. bbolt's own check dies of both.
func TestBrokenBranchIsMovedAside(t *testing.T) {
	src := filepath.Join(t.TempDir(), "state.db")
	clean, pageSize := fillDeep(t, src)
	branch := pagesOf(clean, pageSize, flagBranch)[0]
	for name, pgid := range map[string]uint64{"itself": branch, "far past the file": 1 << 40, "a meta page": 1} {
		t.Run(name, func(t *testing.T) {
			raw := append([]byte(nil), clean...)
			ne.PutUint64(raw[int(branch)*pageSize+pageHeaderLen+8:], pgid)
			path := filepath.Join(t.TempDir(), "state.db")
			os.WriteFile(path, raw, 0o600)
			// A reader beside no daemon is told, without a hang.
			if ro, err := OpenReadOnly(path); !errors.Is(err, ErrDamaged) {
				if ro != nil {
					ro.Close()
				}
				t.Fatalf("read-only open: %v", err)
			}
			d, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.Repaired().Aside == "" {
				t.Fatalf("not moved aside: %+v", d.Repaired())
			}
		})
	}
}

// Every database this build writes passes the walk, at every size.
func TestPageWalkPassesCleanFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	fillDeep(t, path)
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if r := d.Repaired(); r.Happened() {
		t.Fatalf("clean file repaired: %+v", r)
	}
	for i := uint64(0); i < 300; i++ {
		s := &Source{ID: 1000 + i, Path: "/logs/x", Agent: "claude", Session: "claude/sa"}
		if err := d.Commit(Batch{Source: s, Events: []event.Event{{Kind: event.KindUser}}}); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			if err := d.DeleteSource(&Source{ID: 100 + i, Session: fmt.Sprintf("codex/%03d", i%60)}); err != nil {
				t.Fatal(err)
			}
			if err := d.checkStructure(); err != nil {
				t.Fatalf("after %d commits: %v", i, err)
			}
		}
	}
}

// BenchmarkStructureCheck measures the page walk Open runs, against
// bbolt's own check (Tx.Check) of the same clean file as the peer: the
// cost of opening a large state.db.
func BenchmarkStructureCheck(b *testing.B) {
	path := filepath.Join(b.TempDir(), "state.db")
	d, err := Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	d.db.NoSync = true
	evs := make([]event.Event, 40)
	for j := range evs {
		evs[j] = event.Event{Kind: event.KindUser, T: int64(j), User: &event.User{Chars: j}}
	}
	var id uint64
	for range 40 {
		var bs []Batch
		for range 500 {
			id++
			key := fmt.Sprintf("claude/%05d", id%5000)
			src := &Source{ID: id, Path: "/logs/x.jsonl", Agent: "claude", Form: "lines", Session: key, Offset: 10}
			bs = append(bs, Batch{Source: src, Events: evs, Sessions: []*Session{{Key: key, Agent: "claude"}}})
		}
		if err := d.CommitAll(bs); err != nil {
			b.Fatal(err)
		}
	}
	d.Close()
	fi, _ := os.Stat(path)
	b.Logf("state.db of %.1f MB", float64(fi.Size())/1e6)
	db, file, err := boltOpen(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	d = newDB(db, file, path)
	b.Run("page-walk", func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			if err := d.checkStructure(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bbolt-check", func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			if err := db.View(func(tx *bolt.Tx) error {
				for err := range tx.Check() {
					return err
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
