package daemon

import (
	"context"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math/rand/v2"
	"os"
	"testing"
)

// A scan that lets go of sessions must end any history as a scan that
// keeps them all: the same maps and state records, the same sessions
// counted, the same error. The random histories of the following daemons'
// test (retirerandom_test.go) are played to two homes, and after most
// steps each home is caught up by one scan: one that writes every session
// early and lets go of it (a hold of one event), lets go of the quiet
// sessions as it loads them, walks in pieces of two logs and spills every
// session it lets go of to its file; the other holds every event, keeps
// every record and walks in one piece. Three scans in four of the first
// home load the state in pieces of one to three sessions, with the quiet
// logs' table on disk in blocks of two logs. Several steps may come
// between two scans, and a step that restarts the daemons here changes
// the logs between a scan's load and its walk (afterLoad). Every other history is
// played with the retired set's hashes colliding. A failure logs its seed
// and steps.
func TestRetiringScanMatchesKeepingScanOnRandomHistories(t *testing.T) {
	first, last := uint64(1), uint64(*randomHistories)
	if *randomHistorySeed != 0 {
		first, last = *randomHistorySeed, *randomHistorySeed
	}
	var onLoad, takenUp int
	for seed := first; seed <= last; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			if seed%2 == 0 {
				// Not the quiet logs' path hash: a quiet log moved between
				// the load and the walk onto a path whose hash is its old
				// one's is left out of that scan (quietLogs.met), which a
				// 64-bit hash makes a case of one in 2^64, and a hash made
				// to collide a case of every history.
				defer func(k, p func(string) uint64) { retiredKeyHash, retiredPathHash = k, p }(retiredKeyHash, retiredPathHash)
				retiredKeyHash = func(key string) uint64 { return uint64(crc32.ChecksumIEEE([]byte(key)) % 3) }
				retiredPathHash = func(path string) uint64 { return uint64(crc32.ChecksumIEEE([]byte(path)) % 5) }
				t.Log("the retired set's hashes collide")
			}
			r := playScanHistory(t, seed, *randomHistorySteps)
			onLoad, takenUp = onLoad+r.onLoad, takenUp+r.takenUp
		})
	}
	// Keys hashed alike keep their sessions from being let go of on load:
	// a history may prove that part only with its hashes apart.
	if onLoad == 0 || takenUp == 0 {
		t.Errorf("the histories prove nothing: their scans let go of %d sessions as they loaded them and took up %d again", onLoad, takenUp)
	}
}

func playScanHistory(t *testing.T, seed uint64, steps int) *scanHome {
	t.Logf("seed %d", seed)
	h := newHistory(seed)
	pace := rand.New(rand.NewPCG(seed, 0x5ca7))
	logs := h.firstLogs()
	kept, retiring := newScanHome(t, "keeps all", logs), newScanHome(t, "lets go", logs)
	compare := func(after string) {
		t.Helper()
		k, r := kept.scan(nil), retiring.scan(nil)
		if k != r {
			t.Fatalf("after %s (the steps are logged above), the scan that keeps all ended with\n%s\nthe one that lets go with\n%s\ndiffering:\n%s",
				after, k, r, differing(k, r))
		}
	}
	compare("the first scan")
	for i := 1; i <= steps; i++ {
		s := h.next()
		t.Logf("step %d: %s", i, s)
		var during *step
		switch s.kind {
		case restartDaemons:
			during = s.during
		case excludeSessions:
			kept.setExcluded(s) // for the next scan
			retiring.setExcluded(s)
		case flushOne, flushAll, scanAll:
			// Commands to a daemon: here, a scan.
		default:
			kept.apply(s)
			retiring.apply(s)
		}
		if during == nil && i < steps && pace.IntN(3) == 0 {
			continue // more changes before the next scan
		}
		k, r := kept.scan(during), retiring.scan(during)
		if k != r {
			t.Fatalf("after step %d (%s; the steps are logged above), the scan that keeps all ended with\n%s\nthe one that lets go with\n%s\ndiffering:\n%s",
				i, s, k, r, differing(k, r))
		}
	}
	if kept.letGo != 0 || retiring.letGo == 0 || retiring.spilled == 0 || retiring.pieced == 0 {
		t.Errorf("the history proves nothing: the scans that let go let go of %d sessions, spilled %d runs and loaded in pieces %d times; the scans that keep all let go of %d",
			retiring.letGo, retiring.spilled, retiring.pieced, kept.letGo)
	}
	t.Logf("seed %d: the scans let go of %d sessions, %d as they loaded them, spilled %d runs and took up %d again",
		seed, retiring.letGo, retiring.onLoad, retiring.spilled, retiring.takenUp)
	return retiring
}

// scanHome is a home of a history caught up by scans: the home's changes
// are the following daemons' (apply), its scans keep all or let go.
type scanHome struct {
	*home
	letsGo bool
	// What its scans did, summed: sessions let go of (written early or
	// quiet on load), of them on load, spill runs written, sessions taken
	// up again, scans, and of them those that loaded in pieces.
	letGo, onLoad, spilled, takenUp, scans, pieced int
}

func newScanHome(t *testing.T, name string, first []step) *scanHome {
	t.Helper()
	r, opt := quickRig(t, -1)
	opt.Once, opt.Control = true, false
	opt.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})).With("home", name)
	h := &home{t: t, name: name, r: r, opt: opt, trash: r.home + "/trash", spare: r.home + "/spare"}
	for _, dir := range []string{h.trash, h.spare} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range first {
		h.apply(s)
	}
	return &scanHome{home: h, letsGo: name == "lets go"}
}

// scan catches the home up with one scan, making the change during (if
// any) between its load and its walk, and returns what it ended with: its
// error, the sessions it counted, the maps and the records.
func (h *scanHome) scan(during *step) string {
	h.t.Helper()
	defer func(load bool, hold, chunk, spillAt, piece, block int) {
		retireOnLoad, holdEvents, walkChunk, retiredSpillAt, loadPieceSessions, quietBlockLogs, afterLoad = load, hold, chunk, spillAt, piece, block, nil
	}(retireOnLoad, holdEvents, walkChunk, retiredSpillAt, loadPieceSessions, quietBlockLogs)
	var open []*retiredSpill
	spillsLeftOpen = &open
	defer func() { spillsLeftOpen = nil }()
	if h.letsGo {
		retireOnLoad, holdEvents, walkChunk, retiredSpillAt = true, 1, 2, 1
		// Three scans in four load in pieces of one to three sessions.
		loadPieceSessions, quietBlockLogs = [...]int{1, 2, 3, 1 << 30}[h.scans%4], 2
	} else {
		retireOnLoad, holdEvents, walkChunk = false, 1<<30, 1<<20
	}
	if during != nil {
		afterLoad = func() { h.apply(*during) }
	}
	opt := h.opt
	sessions := -1
	opt.Progress = func(_, _ int64, n int) { sessions = n }
	d := New(opt)
	err := d.Run(context.Background())
	h.letGo += d.retiredOnLoad + d.held.early
	h.onLoad += d.retiredOnLoad
	h.takenUp += d.restored
	h.scans++
	if d.loadPieces > 1 {
		h.pieced++
	}
	for _, s := range open {
		h.spilled += len(s.runs)
		s.close()
	}
	db := openState(h.t, h.r)
	defer db.Close()
	srcs, recs, lerr := db.Load()
	if lerr != nil {
		h.t.Fatalf("%s: %v", h.name, lerr)
	}
	return fmt.Sprintf("scan: error %v, %d sessions\n", err, sessions) + h.mapsAndRecords(srcs, recs)
}
