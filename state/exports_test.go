package state

import (
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestExportCursorSurvivesReopen(t *testing.T) {
	d, path := openTemp(t)
	if st, err := d.ExportState(); err != nil || st.DeviceID != "" || st.Pending != nil {
		t.Fatalf("fresh cursor = %+v, %v", st, err)
	}
	pending := &PendingExport{StampMs: 1000, FirstSeq: 5, Sessions: []Exported{{Key: "claude/a", Path: "claude/a.json.gz", SHA256: "h1"}}}
	if err := d.PutExportState(ExportState{DeviceID: "dev", NextSeq: 5, Pending: pending}); err != nil {
		t.Fatal(err)
	}
	st, _ := d.ExportState()
	if st.Pending == nil || st.Pending.FirstSeq != 5 || len(st.Pending.Sessions) != 1 {
		t.Fatalf("pending not kept: %+v", st)
	}
	st.Pending, st.NextSeq, st.Count, st.LastMs = nil, 9, 1, 1000
	if err := d.PutSessions(&Session{Key: "claude/a", Agent: "claude"}); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitExport(st, []Exported{{Key: "claude/a", SHA256: "h1", StampMs: 1000}, {Key: "claude/gone", SHA256: "h2"}}); err != nil {
		t.Fatal(err)
	}
	d2 := reopen(t, d, path)
	st, err := d2.ExportState()
	if err != nil || st.Pending != nil || st.NextSeq != 9 || st.DeviceID != "dev" || st.Count != 1 {
		t.Fatalf("cursor after reopen = %+v, %v", st, err)
	}
	got, err := d2.ExportedContent()
	if err != nil || len(got) != 1 || got["claude/a"] != "h1" { // claude/gone has no record: forgotten meanwhile
		t.Fatalf("exported = %v, %v", got, err)
	}
}

func TestFlushedListsWrittenMapsOnly(t *testing.T) {
	d, _ := openTemp(t)
	ss := []*Session{
		{Key: "codex/b", Agent: "codex", Flush: &Flush{Path: "codex/b.json.gz", SHA256: "hb", AtMs: 7}},
		{Key: "claude/a", Agent: "claude", Flush: &Flush{Path: "claude/a.json.gz", SHA256: "ha", AtMs: 8}},
		{Key: "claude/empty", Agent: "claude", Flush: &Flush{Gen: 1}}, // no events: no map
		{Key: "claude/new", Agent: "claude"},                          // never flushed
	}
	if err := d.PutSessions(ss...); err != nil {
		t.Fatal(err)
	}
	got, err := d.Flushed()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Key != "claude/a" || got[1].Key != "codex/b" || got[0].SHA256 != "ha" || got[0].FlushedMs != 8 {
		t.Fatalf("flushed = %+v", got)
	}
}

// A database written before scheduled exports existed has no exports
// bucket: it reads as nothing exported, and the first commit creates it.
func TestExportsBucketCreatedOnFirstUse(t *testing.T) {
	d, _ := openTemp(t)
	d.db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketExports) })
	if got, err := d.ExportedContent(); err != nil || len(got) != 0 {
		t.Fatalf("exported = %v, %v", got, err)
	}
	if err := d.PutSessions(&Session{Key: "k", Agent: "claude"}); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitExport(ExportState{Count: 1}, []Exported{{Key: "k", SHA256: "h"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.ExportedContent(); got["k"] != "h" {
		t.Fatalf("exported = %v", got)
	}
	if v, _ := d.Version(); v != SchemaVersion {
		t.Fatalf("version %d", v)
	}
}
