package export_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder/redact"
	. "github.com/agentmap/agentmap/export"
)

func writeMapFile(t *testing.T, dir string) string {
	t.Helper()
	gz, err := fixtureDoc(t, redact.ModeRelative).Gzip()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "fixture-1.json.gz")
	if err := os.WriteFile(p, gz, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// Batches under successive stamps: the newest keep of each format that
// were written (owned) stay; a file named as an export that was not
// written by them (another data directory's, a copy by hand), an owned
// file replaced since, and any other file are left alone.
func TestPruneOwnedKeepsNewest(t *testing.T) {
	maps := writeMapFile(t, t.TempDir())
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600)
	theirs := filepath.Join(dir, "agentmap-20200101T000000Z.jsonl")
	os.WriteFile(theirs, []byte("another writer's export"), 0o600)
	o := testOptions("")
	var seqs []uint64
	var owned []OwnedFile
	for i := range 3 {
		b := Batch{Dir: dir, Formats: Formats(), Options: o, Stamp: testNow.Add(time.Duration(i) * time.Hour)}
		res, err := b.Write(Selection{}, []string{maps}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Files) != len(Formats()) || res.Sessions != 1 {
			t.Fatalf("batch %d: %+v", i, res)
		}
		raw, _ := os.ReadFile(maps)
		if sum := sha256.Sum256(raw); res.Exported[maps] != hex.EncodeToString(sum[:]) || len(res.Exported) != 1 {
			t.Fatalf("batch %d: exported %v, want the hash of the map file as read", i, res.Exported)
		}
		seqs = append(seqs, res.NextSeq)
		o.FirstSeq = res.NextSeq
		owned = append(owned, Own(res.Files)...)
	}
	if !(seqs[0] < seqs[1] && seqs[1] < seqs[2]) {
		t.Errorf("source_seq did not advance across batches: %v", seqs)
	}
	// The first batch's bundle is replaced by someone: no longer owned.
	replaced := filepath.Join(dir, FileName(Bundle, testNow))
	os.WriteFile(replaced, []byte("a file of someone else's now"), 0o600)

	still, err := PruneOwned(dir, Formats(), 2, owned)
	if err != nil {
		t.Fatal(err)
	}
	got := names(t, dir)
	if len(got) != 2*len(Formats())+3 {
		t.Fatalf("files after pruning: %v", got)
	}
	for _, n := range got {
		base := filepath.Base(n)
		if base < "agentmap-20260203T050506Z" && base != filepath.Base(theirs) && base != filepath.Base(replaced) && base != "notes.txt" {
			t.Errorf("an old export survived: %s", n)
		}
	}
	for _, p := range []string{theirs, replaced} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("a file not written by the batches was pruned: %s", p)
		}
	}
	if len(still) != 2*len(Formats()) {
		t.Errorf("%d files still owned, want the %d kept", len(still), 2*len(Formats()))
	}
	for _, o := range still {
		if o.Name == filepath.Base(replaced) {
			t.Error("the replaced file is still owned")
		}
	}
}

// A batch that fails in one format leaves no file of any format, so a
// retry starts clean.
func TestBatchAllOrNothing(t *testing.T) {
	maps := writeMapFile(t, t.TempDir())
	dir := t.TempDir()
	o := testOptions("")
	o.DeviceID = "not-a-uuid" // attemptdb refuses to start
	b := Batch{Dir: dir, Formats: []Format{Bundle, JSONL, AttemptDB}, Options: o, Stamp: testNow}
	if _, err := b.Write(Selection{}, []string{maps}, nil); err == nil {
		t.Fatal("batch with a bad device id succeeded")
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("files left by a failed batch: %v", got)
	}
	// Nothing selected: nothing written, no error.
	b.Options = testOptions("")
	res, err := b.Write(Selection{Since: testNow.AddDate(10, 0, 0)}, []string{maps}, nil)
	if err != nil || len(res.Files) != 0 || res.NextSeq != 1 {
		t.Errorf("empty batch: %+v %v", res, err)
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("files left by an empty batch: %v", got)
	}
}

// An owned record names its directory: after export.dir changed, a file of
// the same name, size and time in the new directory (old exports copied
// over with their times) is not taken for it; and a name recorded twice
// (a record retried) counts once, so that keep = 1 keeps the newest.
func TestPruneOwnedByDirectoryAndOnce(t *testing.T) {
	maps := writeMapFile(t, t.TempDir())
	old, now := t.TempDir(), t.TempDir()
	var owned []OwnedFile
	for i := range 2 {
		b := Batch{Dir: old, Formats: []Format{JSONL}, Options: testOptions(""), Stamp: testNow.Add(time.Duration(i) * time.Hour)}
		res, err := b.Write(Selection{}, []string{maps}, nil)
		if err != nil {
			t.Fatal(err)
		}
		owned = append(owned, Own(res.Files)...)
		owned = append(owned, Own(res.Files)...) // recorded twice
	}
	// The old directory's exports copied into the new one, times kept.
	for _, o := range owned {
		raw, _ := os.ReadFile(filepath.Join(old, o.Name))
		p := filepath.Join(now, o.Name)
		os.WriteFile(p, raw, 0o600)
		os.Chtimes(p, time.Unix(0, o.ModNs), time.Unix(0, o.ModNs))
	}
	if _, err := PruneOwned(now, []Format{JSONL}, 1, owned); err != nil {
		t.Fatal(err)
	}
	if got := names(t, now); len(got) != 2 {
		t.Errorf("copies in the new directory pruned by the old one's records: %v", got)
	}
	still, err := PruneOwned(old, []Format{JSONL}, 1, owned)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, old); len(got) != 1 || len(still) != 1 || filepath.Base(got[0]) != FileName(JSONL, testNow.Add(time.Hour)) {
		t.Errorf("keep 1 of two exports each recorded twice: left %v, owned %v", got, still)
	}
}
