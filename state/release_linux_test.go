package state

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/internal/resident"
)

// mappedKB is the resident size of this process's mapping of path, in
// KiB.
func mappedKB(t *testing.T, path string) int {
	t.Helper()
	kb, err := resident.Mapped(path)
	if errors.Is(err, resident.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return kb
}

// Pages read through the mapping leave the process's resident memory on
// ReleaseMapped, and read back the same afterwards.
func TestReleaseMappedDropsResidentPages(t *testing.T) {
	defer func(n int64) { releaseLookups = n }(releaseLookups)
	releaseLookups = 1 << 40
	d, path := openTemp(t)
	commitSessions(t, d, 400)
	readAll := func() int {
		n := 0
		for i := range 400 {
			if err := d.Events(fmt.Sprintf("claude/s%d", i), func(_ uint64, evs []event.Event) error {
				n += len(evs)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	if n := readAll(); n != 400*40 {
		t.Fatalf("read %d events", n)
	}
	before := mappedKB(t, path)
	if before < 512 {
		t.Fatalf("only %d KiB of the mapping resident after reading every event", before)
	}
	if err := d.ReleaseMapped(); err != nil {
		t.Fatal(err)
	}
	if after := mappedKB(t, path); after > before/4 {
		t.Fatalf("%d KiB resident after the release, %d before", after, before)
	}
	if n := readAll(); n != 400*40 {
		t.Fatalf("after the release, read %d events", n)
	}
}

// The check at open reads every record through the mapping; it lets go of
// the pages as it goes, so that opening a large database does not leave
// (or ever hold) all of it resident.
func TestOpenCheckLetsGoOfThePagesItReads(t *testing.T) {
	d, path := openTemp(t)
	commitSessions(t, d, 800)
	d.Close()
	defer func(n int) { releaseMappedBytes = n }(releaseMappedBytes)
	resident := func(every int) int {
		releaseMappedBytes = every
		d, err := Open(path, nil) // a new mapping: nothing resident before the check
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		return mappedKB(t, path)
	}
	kept := resident(1 << 40)
	if kept < 1024 {
		t.Fatalf("only %d KiB resident after a check that kept every page", kept)
	}
	released := resident(64 << 10)
	t.Logf("resident after the check: %d KiB letting go every 64 KiB, %d KiB keeping every page", released, kept)
	if released > kept/4 {
		t.Fatalf("%d KiB resident after a check that lets go every 64 KiB, %d without", released, kept)
	}
}

// Records and events read back by key, session after session in no
// order (a rewrite of every map, a flush of many), do not pile up in the
// process's resident memory: the database lets go of the pages every
// releaseLookups look-ups, without being asked.
func TestLookupsLetGoOfThePagesTheyRead(t *testing.T) {
	d, path := openTemp(t)
	const sessions = 12000
	commitSessions(t, d, sessions)
	defer func(n int64) { releaseLookups = n }(releaseLookups)
	readBack := func(every int64) int {
		releaseLookups = every
		d.lookups.Store(0)
		if err := d.ReleaseMapped(); err != nil {
			t.Fatal(err)
		}
		for n := range sessions {
			i := n * 7919 % sessions // every session once, far from the last
			key := fmt.Sprintf("claude/s%d", i)
			if _, _, err := d.Records(key, []uint64{uint64(i + 1)}); err != nil {
				t.Fatal(err)
			}
			if err := d.Events(key, func(uint64, []event.Event) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := d.HasSources([]uint64{uint64(i + 1)}); err != nil {
				t.Fatal(err)
			}
		}
		return mappedKB(t, path)
	}
	kept := readBack(1 << 40)
	released := readBack(16)
	t.Logf("resident after reading back %d sessions: %d KiB letting go every 16 look-ups, %d KiB never", sessions, released, kept)
	if kept < 2048 {
		t.Fatalf("only %d KiB resident after reading back every session without letting go", kept)
	}
	if released > kept/4 {
		t.Fatalf("%d KiB resident when letting go every 16 look-ups, %d without", released, kept)
	}
}
