package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agentmap/agentmap/builder/event"
)

func openTemp(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, path
}

// reopen closes d and opens its file again, closed when the test ends.
func reopen(t *testing.T, d *DB, path string) *DB {
	t.Helper()
	d.Close()
	d2, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d2.Close() })
	return d2
}

func TestSchemaVersionMatchesMigrations(t *testing.T) {
	if SchemaVersion != len(migrations) {
		t.Fatalf("SchemaVersion %d, %d migrations", SchemaVersion, len(migrations))
	}
}

func TestCommitAndReopen(t *testing.T) {
	d, path := openTemp(t)
	src := &Source{ID: 7, Path: "/logs/a.jsonl", Agent: "claude", Form: "lines", Session: "claude/s1", Offset: 120}
	sess := &Session{Key: "claude/s1", Agent: "claude", NativeID: "s1", Gen: 1}
	evs := []event.Event{{Kind: event.KindUser, T: 5, User: &event.User{Chars: 3}}, {Kind: event.KindTurnEnd, T: 6}}
	if err := d.Commit(Batch{Source: src, Carry: []byte("carry-1"), SetCarry: true, Events: evs, Sessions: []*Session{sess}}); err != nil {
		t.Fatal(err)
	}
	if src.NextSeq != 1 {
		t.Fatalf("NextSeq = %d, want 1", src.NextSeq)
	}
	src.Offset = 200
	if err := d.Commit(Batch{Source: src, Carry: []byte("carry-2"), SetCarry: true, Events: evs[:1]}); err != nil {
		t.Fatal(err)
	}
	d2 := reopen(t, d, path)
	srcs, ss, err := d2.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].ID != 7 || srcs[0].Offset != 200 || srcs[0].NextSeq != 2 {
		t.Fatalf("sources after reopen: %+v", srcs)
	}
	if len(ss) != 1 || ss[0].Key != "claude/s1" || ss[0].Gen != 1 {
		t.Fatalf("sessions after reopen: %+v", ss)
	}
	carry, _ := d2.Carry(7)
	if string(carry) != "carry-2" {
		t.Fatalf("carry = %q", carry)
	}
	var got []event.Event
	if err := d2.Events("claude/s1", func(id uint64, e []event.Event) error {
		if id != 7 {
			t.Errorf("source id %d", id)
		}
		got = append(got, e...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Kind != event.KindUser || got[1].Kind != event.KindTurnEnd || got[2].User.Chars != 3 {
		t.Fatalf("events: %+v", got)
	}
}

// A batch that fails inside the transaction leaves neither its events nor
// its cursor behind.
func TestCommitIsOneTransaction(t *testing.T) {
	d, _ := openTemp(t)
	src := &Source{ID: 1, Path: "/x", Session: "codex/a", Offset: 10}
	if err := d.Commit(Batch{Source: src, Events: []event.Event{{Kind: event.KindUser}}}); err != nil {
		t.Fatal(err)
	}
	bad := *src
	bad.Offset = 999
	bad.Session = "" // no bucket name: the event put fails mid-transaction
	if err := d.Commit(Batch{Source: &bad, Carry: []byte("x"), SetCarry: true, Events: []event.Event{{Kind: event.KindUser}}}); err == nil {
		t.Fatal("commit with an empty session key succeeded")
	}
	srcs, _, _ := d.Load()
	if srcs[0].Offset != 10 {
		t.Fatalf("cursor moved to %d by a failed batch", srcs[0].Offset)
	}
	if c, _ := d.Carry(1); c != nil {
		t.Fatalf("carry written by a failed batch: %q", c)
	}
}

func TestResetDropsOnlyThatSource(t *testing.T) {
	d, _ := openTemp(t)
	a := &Source{ID: 1, Session: "claude/s"}
	b := &Source{ID: 2, Session: "claude/s"}
	for i := 0; i < 3; i++ {
		for _, s := range []*Source{a, b} {
			if err := d.Commit(Batch{Source: s, Events: []event.Event{{Kind: event.KindUser, T: int64(s.ID)}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Commit(Batch{Source: a, Reset: true, ResetSession: "claude/s", Events: []event.Event{{Kind: event.KindEnd}}}); err != nil {
		t.Fatal(err)
	}
	counts := map[uint64]int{}
	d.Events("claude/s", func(id uint64, e []event.Event) error { counts[id] += len(e); return nil })
	if counts[1] != 1 || counts[2] != 3 {
		t.Fatalf("counts after reset: %v", counts)
	}
	if err := d.DeleteSource(b); err != nil {
		t.Fatal(err)
	}
	counts = map[uint64]int{}
	d.Events("claude/s", func(id uint64, e []event.Event) error { counts[id] += len(e); return nil })
	if counts[2] != 0 {
		t.Fatalf("events of a deleted source remain: %v", counts)
	}
}

func TestSecondOpenFailsClearly(t *testing.T) {
	_, path := openTemp(t)
	start := time.Now()
	_, err := Open(path, nil)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	if !strings.Contains(err.Error(), "agentmap is already running") || !strings.Contains(err.Error(), path) {
		t.Fatalf("message does not say what is wrong: %v", err)
	}
	t.Logf("second open failed after %v", time.Since(start))
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) > 0 {
		t.Fatal("a locked database was moved aside")
	}
}

func TestCorruptIsMovedAside(t *testing.T) {
	for name, content := range map[string][]byte{
		"garbage":       bytes.Repeat([]byte("not a database "), 1000),
		"damaged pages": nil, // filled below from a real database
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.db")
			if content == nil {
				d, err := Open(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				d.Commit(Batch{Source: &Source{ID: 1, Session: "k"}, Events: []event.Event{{Kind: event.KindUser}}})
				d.Close()
				raw, _ := os.ReadFile(path)
				for i := 4096 * 2; i < len(raw) && i < 4096*3; i++ {
					raw[i] = 0xff
				}
				content = raw
			}
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			d, err := Open(path, nil)
			if err != nil {
				t.Fatalf("open of a corrupt database: %v", err)
			}
			defer d.Close()
			// Damage the structure shows is moved aside whole; damage
			// to records drops them. Either way nothing damaged is left.
			aside, _ := filepath.Glob(path + ".corrupt-*")
			rep := d.Repaired()
			if !rep.Happened() || (len(aside) == 1) != (rep.Aside != "") {
				t.Fatalf("damage not reported: %+v, aside %v", rep, aside)
			}
			srcs, _, err := d.Load()
			if err != nil || len(srcs) != 0 {
				t.Fatalf("fresh database expected: %v %v", srcs, err)
			}
		})
	}
}

func TestMigrationFromUnversioned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	raw, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("sources")); return err })
	raw.Close()
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if v, _ := d.Version(); v != SchemaVersion {
		t.Fatalf("version %d after migration, want %d", v, SchemaVersion)
	}
	if _, _, err := d.Load(); err != nil {
		t.Fatalf("load after migration: %v", err)
	}
}

func TestNewerSchemaIsRefusedNotDiscarded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	raw, _ := bolt.Open(path, 0o600, nil)
	raw.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucket(bucketMeta)
		return b.Put(keySchema, []byte("99"))
	})
	raw.Close()
	if _, err := Open(path, nil); !errors.Is(err, ErrTooNew) {
		t.Fatalf("open of a newer schema: %v", err)
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) > 0 {
		t.Fatal("a newer database was moved aside")
	}
}

// Batches of several sources, and several batches of one source, commit
// together or not at all.
func TestCommitAll(t *testing.T) {
	d, _ := openTemp(t)
	a := &Source{ID: 1, Session: "claude/a", Offset: 10}
	b := &Source{ID: 2, Session: "claude/b", Offset: 20}
	ev := []event.Event{{Kind: event.KindUser}}
	if err := d.CommitAll([]Batch{
		{Source: a, Seq: 0, Events: ev},
		{Source: a, Seq: 1, Events: ev, Carry: []byte("a"), SetCarry: true},
		{Source: b, Seq: 0, Events: ev, Sessions: []*Session{{Key: "claude/b", Gen: 4}}},
	}); err != nil {
		t.Fatal(err)
	}
	n := 0
	d.Events("claude/a", func(_ uint64, e []event.Event) error { n += len(e); return nil })
	if n != 2 {
		t.Fatalf("%d events of a, want 2", n)
	}
	bad := &Source{ID: 3, Session: ""}
	a.Offset = 99
	if err := d.CommitAll([]Batch{{Source: a, Seq: 2, Events: ev}, {Source: bad, Events: ev}}); err == nil {
		t.Fatal("a group with a bad batch committed")
	}
	srcs, _, _ := d.Load()
	for _, s := range srcs {
		if s.ID == 1 && s.Offset != 10 {
			t.Fatalf("offset %d from a failed group", s.Offset)
		}
	}
	n = 0
	d.Events("claude/a", func(_ uint64, e []event.Event) error { n += len(e); return nil })
	if n != 2 {
		t.Fatalf("%d events of a after a failed group, want 2", n)
	}
}

// Records reads back one session's record and some sources' as committed,
// and says so when one is not there.
func TestRecordsReadsBackWhatWasCommitted(t *testing.T) {
	d, _ := openTemp(t)
	a := &Source{ID: 3, Path: "/logs/a.jsonl", Agent: "claude", Form: "lines", Session: "claude/s1", Offset: 40, HeadLen: 40, HeadHash: "h"}
	b := &Source{ID: 9, Path: "/logs/s1/agent-x.jsonl", Agent: "claude", Form: "lines", Session: "claude/s1", Lane: "x", Offset: 12}
	other := &Source{ID: 4, Path: "/logs/b.jsonl", Agent: "claude", Form: "lines", Session: "claude/s2"}
	sess := &Session{Key: "claude/s1", Agent: "claude", NativeID: "s1", Gen: 2,
		Flush: &Flush{Path: "claude/2026/12/s1.json.gz", Gen: 2, Sum: Summary{Calls: 5}}}
	if err := d.CommitAll([]Batch{{Source: a, Sessions: []*Session{sess}}, {Source: b}, {Source: other}}); err != nil {
		t.Fatal(err)
	}
	got, srcs, err := d.Records("claude/s1", []uint64{9, 3})
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != "claude/s1" || got.Gen != 2 || got.Flush == nil || got.Flush.Path != sess.Flush.Path || got.Flush.Sum.Calls != 5 {
		t.Errorf("session read back: %+v", got)
	}
	if len(srcs) != 2 || srcs[0].ID != 9 || srcs[0].Lane != "x" || srcs[0].Offset != 12 ||
		srcs[1].ID != 3 || srcs[1].Path != a.Path || srcs[1].HeadHash != "h" || srcs[1].NextSeq != a.NextSeq {
		t.Errorf("sources read back: %+v", srcs)
	}
	if has, err := d.HasSources([]uint64{3, 4, 5, 9}); err != nil || len(has) != 3 || !has[3] || !has[4] || !has[9] || has[5] {
		t.Errorf("HasSources: %v, %v", has, err)
	}
	if _, _, err := d.Records("claude/none", nil); err == nil {
		t.Error("no error for a session with no record")
	}
	if _, _, err := d.Records("claude/s1", []uint64{3, 77}); err == nil {
		t.Error("no error for a source with no record")
	}
}

// LoadEach hands every source record, then every session record, once
// each; an error from either function ends the walk and is returned.
// Sources reads records back by id, and fails on one that is not there.
func TestLoadEachHandsEveryRecordOnce(t *testing.T) {
	d, _ := openTemp(t)
	var bs []Batch
	for i := range 30 {
		id := uint64(i + 1)
		key := fmt.Sprintf("claude/s%d", i/2) // two sources a session
		bs = append(bs, Batch{Source: &Source{ID: id, Path: fmt.Sprintf("/logs/%d.jsonl", id), Agent: "claude",
			Form: "lines", Session: key, Offset: int64(id)}, Sessions: []*Session{{Key: key, Agent: "claude", Gen: id}}})
	}
	if err := d.CommitAll(bs); err != nil {
		t.Fatal(err)
	}
	srcs, sess := map[uint64]int{}, map[string]int{}
	sessionsBeforeSources := false
	if err := d.LoadEach(func(s *Source) error {
		if len(sess) > 0 {
			sessionsBeforeSources = true
		}
		if s.Offset != int64(s.ID) {
			t.Errorf("source %d: offset %d", s.ID, s.Offset)
		}
		srcs[s.ID]++
		return nil
	}, func(s *Session) error {
		sess[s.Key]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 30 || len(sess) != 15 || sessionsBeforeSources {
		t.Errorf("%d sources and %d sessions handed over (want 30 and 15), a session before a source: %v",
			len(srcs), len(sess), sessionsBeforeSources)
	}
	for id, n := range srcs {
		if n != 1 {
			t.Errorf("source %d handed over %d times", id, n)
		}
	}
	stop := errors.New("stop")
	n := 0
	err := d.LoadEach(func(*Source) error {
		if n++; n == 5 {
			return stop
		}
		return nil
	}, func(*Session) error { t.Error("a session handed over after the walk ended"); return nil })
	if !errors.Is(err, stop) || n != 5 {
		t.Errorf("after an error from the first function: %v, %d sources handed over", err, n)
	}
	got, err := d.Sources([]uint64{7, 2})
	if err != nil || len(got) != 2 || got[0].ID != 7 || got[0].Path != "/logs/7.jsonl" || got[1].ID != 2 {
		t.Errorf("Sources: %+v, %v", got, err)
	}
	if _, err := d.Sources([]uint64{2, 99}); err == nil {
		t.Error("Sources: no error for a source with no record")
	}
}

// Records of sources, committed in the order of their growing ids as a
// catch-up does, fill the pages they split to most of a page, not half.
func TestGrowingKeysFillTheirPages(t *testing.T) {
	d, _ := openTemp(t)
	for i := range 40 {
		var bs []Batch
		for j := range 100 {
			id := uint64(i*100 + j + 1)
			bs = append(bs, Batch{Source: &Source{ID: id, Path: fmt.Sprintf("/logs/project-%04d/%d.jsonl", i, id), Agent: "claude",
				Form: "lines", Session: fmt.Sprintf("claude/s%d", id), Offset: int64(id) * 100}, Carry: []byte("carry"), SetCarry: true})
		}
		if err := d.CommitAll(bs); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.db.View(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketSources, bucketCarry} {
			st := tx.Bucket(name).Stats()
			if st.LeafPageN < 10 {
				t.Fatalf("%s: only %d leaf pages: too few records to tell", name, st.LeafPageN)
			}
			if fill := float64(st.LeafInuse) / float64(st.LeafAlloc); fill < 0.75 {
				t.Errorf("%s: leaf pages %.0f%% full (%d pages)", name, 100*fill, st.LeafPageN)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A setting is kept across a reopen, and an empty one removed.
func TestSettings(t *testing.T) {
	d, path := openTemp(t)
	if v, err := d.Setting(SettingExcludeKey); err != nil || v != "" {
		t.Fatalf("never put: %q %v", v, err)
	}
	if err := d.PutSetting(SettingExcludeKey, "k1"); err != nil {
		t.Fatal(err)
	}
	d2 := reopen(t, d, path)
	if v, err := d2.Setting(SettingExcludeKey); err != nil || v != "k1" {
		t.Fatalf("after a reopen: %q %v", v, err)
	}
	if err := d2.PutSetting(SettingExcludeKey, ""); err != nil {
		t.Fatal(err)
	}
	if v, err := d2.Setting(SettingExcludeKey); err != nil || v != "" {
		t.Fatalf("removed: %q %v", v, err)
	}
	if r := reopen(t, d2, path).Repaired(); r.Happened() {
		t.Fatalf("settings taken for damage: %+v", r)
	}
}

// Something other than a file where the database is kept is no database
// agentmap wrote: refused with what it is, never moved aside.
func TestNotAFileIsRefusedNotMoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, nil)
	if !errors.Is(err, ErrNotAFile) || !strings.Contains(err.Error(), "it is a directory") || !strings.Contains(err.Error(), path) {
		t.Fatalf("open of a directory: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Errorf("the directory is not where it was: %v", err)
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) > 0 {
		t.Errorf("moved aside: %v", m)
	}
	if _, err := OpenReadOnly(path); !errors.Is(err, ErrNotAFile) {
		t.Errorf("read-only open of a directory: %v", err)
	}
	if _, err := moveAside(path); !errors.Is(err, ErrNotAFile) {
		t.Errorf("moveAside of a directory: %v", err)
	}
}
