package state

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/agentmap/agentmap/builder/event"
)

// sampleEvents are a batch with the repetition real batches have.
func sampleEvents(n int) []event.Event {
	evs := make([]event.Event, n)
	for i := range evs {
		evs[i] = event.Event{Kind: event.KindCall, T: int64(1000 + i),
			Call: &event.Call{ID: "call_" + string(rune('a'+i%26)), Tool: "Bash", Kind: "exec", Verb: "git status"}}
	}
	return evs
}

func storedBatch(t *testing.T, path, session string, key []byte) []byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v []byte
	db.View(func(tx *bolt.Tx) error {
		v = append([]byte(nil), tx.Bucket(bucketEvents).Bucket([]byte(session)).Get(key)...)
		return nil
	})
	return v
}

func readEvents(t *testing.T, d *DB, session string) ([]event.Event, error) {
	t.Helper()
	var got []event.Event
	err := d.Events(session, func(_ uint64, e []event.Event) error { got = append(got, e...); return nil })
	return got, err
}

// A batch is stored compressed, sealed, and read back as it was committed,
// whether its bytes were encoded by the commit or handed to it encoded.
func TestEventBatchesAreStoredCompressed(t *testing.T) {
	d, path := openTemp(t)
	evs := sampleEvents(200)
	src := &Source{ID: 3, Path: "/logs/a.jsonl", Agent: "claude", Form: "lines", Session: "claude/s1"}
	if err := d.Commit(Batch{Source: src, Events: evs}); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(Batch{Source: src, Events: evs[:7], Encoded: EncodeEvents(evs[:7])}); err != nil {
		t.Fatal(err)
	}
	got, err := readEvents(t, d, "claude/s1")
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([]event.Event(nil), evs...), evs[:7]...); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %d events, not the %d committed", len(got), len(want))
	}
	d.Close()
	v := storedBatch(t, path, "claude/s1", eventKey(3, 0))
	plain := event.AppendJSON(nil, evs)
	if len(v) == 0 || v[0] != tagS2 {
		t.Fatalf("stored batch does not start with the compression tag: % x", v[:min(len(v), 8)])
	}
	if len(v) > len(plain)/3 {
		t.Fatalf("stored batch is %d bytes for %d bytes of JSON", len(v), len(plain))
	}
}

// Batches written before compression, sealed or from before seals, are
// read as they are, beside compressed ones of the same session.
func TestPlainEventBatchesStillRead(t *testing.T) {
	d, path := openTemp(t)
	evs := sampleEvents(5)
	src := &Source{ID: 4, Path: "/logs/a.jsonl", Agent: "claude", Form: "lines", Session: "claude/s1"}
	sess := []*Session{{Key: "claude/s1", Agent: "claude"}}
	for range 3 {
		if err := d.Commit(Batch{Source: src, Events: evs, Sessions: sess}); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	scope := eventsScope([]byte("claude/s1"))
	poke(t, path, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEvents).Bucket([]byte("claude/s1"))
		if err := b.Put(eventKey(4, 0), seal(scope, eventKey(4, 0), event.AppendJSON(nil, evs[:2]))); err != nil {
			return err
		}
		return b.Put(eventKey(4, 1), event.AppendJSON(nil, evs[2:3]))
	})
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if rep := d.Repaired(); rep.Happened() {
		t.Fatalf("plain batches taken for damage: %+v", rep)
	}
	got, err := readEvents(t, d, "claude/s1")
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]event.Event(nil), evs[:2]...), evs[2:3]...), evs...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %d events, want %d", len(got), len(want))
	}
}

// A compressed batch whose seal is damaged is damage, never decoded as a
// value from before seals; one whose compressed bytes are damaged under a
// good seal (only a bug could write it) is reported, not read as events.
func TestDamagedCompressedBatch(t *testing.T) {
	for name, damage := range map[string]func(v []byte) []byte{
		"seal":     func(v []byte) []byte { v[len(v)-sealLen+1] = 'x'; return v },
		"contents": func(v []byte) []byte { return v },
	} {
		t.Run(name, func(t *testing.T) {
			d, path := openTemp(t)
			src := &Source{ID: 5, Path: "/logs/a.jsonl", Agent: "claude", Form: "lines", Session: "claude/s1"}
			sess := []*Session{{Key: "claude/s1", Agent: "claude"}}
			if err := d.Commit(Batch{Source: src, Events: sampleEvents(50), Sessions: sess}); err != nil {
				t.Fatal(err)
			}
			d.Close()
			k := eventKey(5, 0)
			scope := eventsScope([]byte("claude/s1"))
			poke(t, path, func(tx *bolt.Tx) error {
				b := tx.Bucket(bucketEvents).Bucket([]byte("claude/s1"))
				v := append([]byte(nil), b.Get(k)...)
				if name == "contents" {
					payload := append([]byte{tagS2}, "not s2 at all"...)
					v = seal(scope, k, payload)
				}
				return b.Put(k, damage(v))
			})
			d, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if name == "seal" {
				// Found when the database is opened: the source goes.
				if rep := d.Repaired(); rep.Sources != 1 {
					t.Fatalf("repair after a damaged seal: %+v", rep)
				}
				return
			}
			_, err = readEvents(t, d, "claude/s1")
			var de *DamagedError
			if !errors.As(err, &de) {
				t.Fatalf("damaged compressed batch read as: %v", err)
			}
		})
	}
}

// A database of schema 1 (plain batches) opens at schema 2 with its
// batches as they were.
func TestMigrationToCompressedBatchesKeepsOldBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := &Source{ID: 9, Path: "/logs/a.jsonl", Agent: "claude", Form: "lines", Session: "claude/s1", NextSeq: 1}
	if err := d.CommitAll([]Batch{{Source: src, Sessions: []*Session{{Key: "claude/s1", Agent: "claude"}}}}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	evs := sampleEvents(4)
	poke(t, path, func(tx *bolt.Tx) error {
		k := eventKey(9, 0)
		b, err := tx.Bucket(bucketEvents).CreateBucketIfNotExists([]byte("claude/s1"))
		if err != nil {
			return err
		}
		if err := b.Put(k, seal(eventsScope([]byte("claude/s1")), k, event.AppendJSON(nil, evs))); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchema, seal(bucketMeta, keySchema, []byte("1")))
	})
	d, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if v, _ := d.Version(); v != 2 {
		t.Fatalf("schema %d after open, want 2", v)
	}
	got, err := readEvents(t, d, "claude/s1")
	if err != nil || !reflect.DeepEqual(got, evs) {
		t.Fatalf("events after migration: %d, %v", len(got), err)
	}
}

// The text of a compressed batch, absent from the file's bytes, is in
// what an audit searches.
func TestSearchableBytesHoldCompressedText(t *testing.T) {
	d, path := openTemp(t)
	evs := sampleEvents(300)
	// A string met before in the batch is stored as a reference to it,
	// so the whole of the second is nowhere in the file as it is.
	evs[100].Call.Verb = "needle-verb-in-a-bat"
	evs[150].Call.Verb = "needle-verb-in-a-batch"
	src := &Source{ID: 3, Path: "/logs/a.jsonl", Agent: "claude", Form: "lines", Session: "claude/s1"}
	if err := d.Commit(Batch{Source: src, Events: evs, Sessions: []*Session{{Key: "claude/s1", Agent: "claude"}}}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte("needle-verb-in-a-batch")) {
		t.Skip("the batch's text is in the file's bytes as it is: nothing to show")
	}
	b, err := SearchableBytes(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"verb":"needle-verb-in-a-batch"`)) || !bytes.HasPrefix(b, raw) {
		t.Fatal("a compressed batch's text is not in the searchable bytes")
	}
}

// A batch a reset dropped is still in the file, on a page bbolt freed,
// until the page is written over: it is searched there too, as its plain
// bytes were before batches were compressed.
func TestSearchableBytesHoldDroppedBatches(t *testing.T) {
	d, path := openTemp(t)
	evs := sampleEvents(300)
	evs[100].Call.Verb = "dropped-needle-verb-in-a-bat"
	evs[150].Call.Verb = "dropped-needle-verb-in-a-batch"
	sess := []*Session{{Key: "claude/s1", Agent: "claude"}}
	src := &Source{ID: 3, Path: "/logs/a.jsonl", Agent: "claude", Form: "lines", Session: "claude/s1"}
	if err := d.Commit(Batch{Source: src, Events: evs, Sessions: sess}); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(Batch{Source: src, Reset: true, ResetSession: "claude/s1", Events: sampleEvents(3), Sessions: sess}); err != nil {
		t.Fatal(err)
	}
	if got, _ := readEvents(t, d, "claude/s1"); len(got) != 3 {
		t.Fatalf("%d events after the reset, want 3", len(got))
	}
	d.Close()
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte("dropped-needle-verb-in-a-batch")) {
		t.Skip("the dropped batch's text is in the file's bytes as it is: nothing to show")
	}
	if !bytes.Contains(raw, []byte("dropped-needle-verb-in-a-bat")) {
		t.Skip("the freed page was written over")
	}
	b, err := SearchableBytes(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"verb":"dropped-needle-verb-in-a-batch"`)) {
		t.Fatal("a dropped batch's text is not in the searchable bytes")
	}
}

// A database of schema 1, not yet migrated by a daemon of this build, is
// read as it is by the commands that read it alongside no daemon.
func TestReadOnlyReadsSchemaOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := sampleEvents(4)
	src := &Source{ID: 2, Path: "/logs/a.jsonl", Agent: "claude", Form: "lines", Session: "claude/s1"}
	if err := d.Commit(Batch{Source: src, Events: evs, Sessions: []*Session{{Key: "claude/s1", Agent: "claude"}}}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	poke(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchema, seal(bucketMeta, keySchema, []byte("1")))
	})
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("read-only open of schema 1: %v", err)
	}
	defer ro.Close()
	got, err := readEvents(t, ro, "claude/s1")
	if err != nil || !reflect.DeepEqual(got, evs) {
		t.Fatalf("events read from schema 1: %d, %v", len(got), err)
	}
}

// The compression tag is honoured on a sealed value only: the same bytes
// without a seal are a value from before seals that is not JSON, and so
// damage. PlainValue gives audits the JSON of a stored batch either way.
func TestCompressionTagOnlyUnderASeal(t *testing.T) {
	evs := sampleEvents(20)
	scope, key := eventsScope([]byte("claude/s1")), eventKey(1, 0)
	enc := EncodeEvents(evs)
	var got []event.Event
	if err := decodeEvents(scope, key, seal(scope, key, append([]byte(nil), enc...)), &got); err != nil || !reflect.DeepEqual(got, evs) {
		t.Fatalf("sealed compressed batch: %d events, %v", len(got), err)
	}
	if err := decodeEvents(scope, key, enc, &got); !errors.Is(err, ErrDamaged) {
		t.Fatalf("an unsealed compressed batch read as: %v", err)
	}
	js := event.AppendJSON(nil, evs)
	for name, v := range map[string][]byte{
		"compressed": seal(scope, key, append([]byte(nil), enc...)),
		"plain":      seal(scope, key, append([]byte(nil), js...)),
		"unsealed":   js,
	} {
		if p, ok := PlainValue(v); !ok || !bytes.Equal(p, js) {
			t.Errorf("%s: PlainValue gave %d bytes (%v), not the batch's JSON", name, len(p), ok)
		}
	}
	if _, ok := PlainValue(seal(scope, key, []byte{tagS2, 0xff, 0xff, 0xff})); ok {
		t.Error("a compressed batch that does not decompress was given as plain")
	}
}

// A name that could be text is stored as none, whichever parser let it
// through: the state database holds no sentence (event.Name).
func TestStoredEventsHoldNoSentenceInAName(t *testing.T) {
	const s = "CANARY\u200bthe\u200bsecret\u200bmerger"
	evs := []event.Event{
		{Kind: event.KindLLM, Model: s, LLM: &event.LLM{MsgID: "m1", Stop: s}},
		{Kind: event.KindCall, Call: &event.Call{ID: "c\n" + s, Tool: s, Kind: "skill", Skill: s}},
		{Kind: event.KindResult, Result: &event.Result{CallID: "c\n" + s}},
	}
	v := EncodeEvents(evs)
	v = append(v, make([]byte, sealLen)...)
	v[len(v)-sealLen+1] = 'c' // the seal's form, unchecked by PlainValue
	js, ok := PlainValue(v)
	if !ok {
		t.Fatal("the batch does not decompress")
	}
	if bytes.Contains(js, []byte("CANARY")) {
		t.Fatalf("stored events hold a sentence: %s", js)
	}
	if evs[0].Model != s {
		t.Error("encoding changed the caller's events")
	}
	got, ok := event.DecodeJSON(js)
	if !ok || len(got) != 3 {
		t.Fatalf("the batch does not decode: %d events", len(got))
	}
	if got[1].Call.ID == "" || got[1].Call.ID != got[2].Result.CallID || got[1].Call.Kind != "skill" {
		t.Errorf("stored call %+v, result %+v: the ids must still join", got[1].Call, got[2].Result)
	}
}
