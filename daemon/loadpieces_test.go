package daemon

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmap/agentmap/watchers"
)

// loadInPiecesOf has the loads of a test made in pieces of n sessions,
// with the quiet logs' table in blocks of block logs, and fails the test
// when none was.
func loadInPiecesOf(t *testing.T, n, block int) {
	t.Helper()
	var mu sync.Mutex
	pieced := 0
	oldN, oldBlock := loadPieceSessions, quietBlockLogs
	loadPieceSessions, quietBlockLogs = n, block
	loadedInPieces = func(int) { mu.Lock(); pieced++; mu.Unlock() }
	// A load in pieces spills as it goes: the tests look at the retired
	// set after a scan.
	var open []*retiredSpill
	spillsLeftOpen = &open
	t.Cleanup(func() {
		loadPieceSessions, quietBlockLogs, loadedInPieces, spillsLeftOpen = oldN, oldBlock, nil, nil
		for _, s := range open {
			s.close()
		}
		if pieced == 0 {
			t.Error("no load was made in pieces")
		}
	})
}

// The scans of these tests again, with every load in pieces of one
// session, and of two, with the quiet logs' table on disk in blocks of
// one log and of two, with the keys' and paths' hashes apart and
// colliding: their maps, records and counts are checked as before.
func TestScansLoadingInPieces(t *testing.T) {
	for _, size := range [][2]int{{1, 1}, {2, 2}} {
		t.Run(fmt.Sprintf("pieces of %d, blocks of %d", size[0], size[1]), func(t *testing.T) {
			loadInPiecesOf(t, size[0], size[1])
			t.Run("quiet on load", TestQuietSessionsAreLetGoOfOnLoad)
			t.Run("changed after the load", TestQuietLogsChangedAfterTheLoad)
			t.Run("deleted after the load", TestQuietLogDeletedAfterTheLoad)
			t.Run("keys sharing a hash", TestQuietLoadWithAPairOfKeysSharingAHash)
			t.Run("paths hashing alike", TestQuietLogsWhosePathsHashAlike)
			if size[0] == 1 {
				// The scans that spill every session they let go of are
				// the slowest here; pieces of one log are where a piece's
				// edge meets the spill most often, and pieces of two add
				// no path of their own to them.
				t.Run("spilling every session", TestScansSpillingEverySessionLetGoOf)
			}
		})
	}
}

// The quiet logs' table on disk answers as the table in memory: random
// logs, many of them sharing a path hash, in runs of random sizes as the
// pieces write them, merged and read back in blocks of 1 to 7 logs, read
// through the file's mapping (where the system maps it), through the
// mapping let go of at every read, and block by block. Each hash's span
// must hold the logs of that hash, where the walk over the whole table has
// them.
func TestQuietTableOnDiskAnswersAsInMemory(t *testing.T) {
	defer func(h func(string) uint64, b, r int) {
		quietPathHash, quietBlockLogs, tableResidentBytes = h, b, r
	}(quietPathHash, quietBlockLogs, tableResidentBytes)
	mapped := 0
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		hashes := 1 + rng.IntN(40) // paths "0" … hashing to themselves
		quietPathHash = func(path string) uint64 {
			var h uint64
			fmt.Sscan(path, &h)
			return h
		}
		var all quietLogs
		s, err := newLoadScratch(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		runs := &quietRuns{s: s}
		for range 1 + rng.IntN(6) {
			run := make(quietLogs, rng.IntN(30))
			for i := range run {
				run[i] = quietLog{path: uint64(rng.IntN(hashes)), id: watchers.FileID{Dev: 1, Ino: rng.Uint64()},
					size: rng.Int64N(1000), modMs: rng.Int64N(1000)}
			}
			slices.SortFunc(run, func(a, b quietLog) int { return cmp.Compare(a.path, b.path) })
			all = append(all, run...)
			if err := runs.add(run); err != nil {
				t.Fatal(err)
			}
		}
		quietBlockLogs = 1 + rng.IntN(7)
		table, err := runs.table()
		if err != nil {
			t.Fatal(err)
		}
		if table.f == nil || table.len() != len(all) {
			t.Fatalf("seed %d: a table of %d logs, on disk %v; want %d on disk", seed, table.len(), table.f != nil, len(all))
		}
		tableResidentBytes = 8 << 20
		switch seed % 3 {
		case 1:
			tableResidentBytes = 1 // let go of at every read
		case 2:
			table.mapped = nil // read block by block
		}
		if table.mapped != nil {
			mapped++
		}
		table.stop = func(err error) { t.Fatal(err) }
		var walked quietLogs
		table.each(func(k int, q quietLog) {
			if k != len(walked) {
				t.Fatalf("seed %d: log %d walked at %d", seed, len(walked), k)
			}
			walked = append(walked, q)
		})
		key := func(q quietLog) string { return fmt.Sprint(q) }
		sortedKeys := func(l quietLogs) []string {
			var out []string
			for _, q := range l {
				out = append(out, key(q))
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(sortedKeys(walked), sortedKeys(all)) {
			t.Fatalf("seed %d: the walk over the table has other logs than were written", seed)
		}
		for h := range hashes + 1 {
			at, got := table.span(fmt.Sprint(h))
			var want quietLogs
			for _, q := range all {
				if q.path == uint64(h) {
					want = append(want, q)
				}
			}
			if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
				t.Fatalf("seed %d, blocks of %d: hash %d spans %v, want %v", seed, quietBlockLogs, h, got, want)
			}
			if len(got) > 0 && !slices.Equal(walked[at:at+len(got)], got) {
				t.Fatalf("seed %d, blocks of %d: hash %d spans %v from %d, where the walk has %v", seed, quietBlockLogs, h, got, at, walked[at:at+len(got)])
			}
		}
		s.close()
	}
	if runtime.GOOS == "linux" && mapped == 0 {
		t.Error("no table was read through a mapping")
	}
}

// writeQuietHome writes n Claude sessions into a home, and returns the
// home's roots and the logs.
func writeQuietHome(t *testing.T, home string, n int) ([]watchers.Root, []string) {
	t.Helper()
	basic, err := os.ReadFile("../testdata/claude/basic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	logs := make([]string, n)
	for i := range logs {
		id := fmt.Sprintf("0a1b2c3d-0000-4000-8000-%012d", 500+i)
		logs[i] = filepath.Join(home, ".claude/projects/-w-a", id+".jsonl")
		os.MkdirAll(filepath.Dir(logs[i]), 0o700)
		if err := os.WriteFile(logs[i], []byte(strings.ReplaceAll(string(basic), "0a1b2c3d-0000-4000-8000-000000000001", id)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return homeRoots(runtime.GOOS, home), logs
}

// A load in pieces whose file cannot be made, or cannot be written, is
// made otherwise and changes nothing that the scan leaves: one that
// cannot create the file, or write its first walk, loads in one piece;
// one that cannot write the quiet logs' runs, or their merge, keeps the
// table in memory. Each second scan, with one log appended to and one
// deleted, must leave the maps and records of a scan that loads in one
// piece.
func TestLoadInPiecesWithoutItsFile(t *testing.T) {
	defer func(n int) { loadPieceSessions = n }(loadPieceSessions)
	full := errors.New("no space left on device (injected)")
	for _, c := range []struct {
		name           string
		create         bool
		failing        []string // what cannot be written (loadScratchWriteFault)
		pieced, inFile bool
	}{
		{name: "the file made and written", pieced: true, inFile: true},
		{name: "no file", create: true},
		{name: "no first walk written", failing: []string{"sources"}},
		{name: "no runs written", failing: []string{"runs", "table"}, pieced: true},
		{name: "no merged table written", failing: []string{"table"}, pieced: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			roots, logs := writeQuietHome(t, home, 6)
			clock := watchers.NewManualClock(time.Now())
			var last *Daemon
			scan := func(data string, pieces int) {
				t.Helper()
				loadPieceSessions = pieces
				last = New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler), Clock: clock})
				if err := last.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			data, want := t.TempDir(), t.TempDir()
			scan(data, 1<<30)
			copyTree(t, data, want)
			f, err := os.OpenFile(logs[0], os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"u\"}\n")
			f.Close()
			os.Remove(logs[1])
			scan(want, 1<<30)
			inFile := false
			func() {
				defer func() { loadScratchCreateFault, loadScratchWriteFault, afterLoad = nil, nil, nil }()
				afterLoad = func() { inFile = last.quietLogs.f != nil }
				if c.create {
					loadScratchCreateFault = full
				}
				loadScratchWriteFault = func(what string) error {
					if slices.Contains(c.failing, what) {
						return full
					}
					return nil
				}
				scan(data, 2)
			}()
			if pieced := last.loadPieces > 1; pieced != c.pieced || inFile != c.inFile {
				t.Errorf("loaded in pieces: %v, the table in the file: %v; want %v, %v", pieced, inFile, c.pieced, c.inFile)
			}
			if last.retiredOnLoad == 0 {
				t.Error("no session was let go of on load")
			}
			sameRecords(t, c.name, want, data)
			scan(data, 2) // and the next scan finds nothing more to do
			sameRecords(t, c.name+", a scan after", want, data)
		})
	}
}

// A load in pieces whose file cannot be read back ends with an error that
// says so, and a scan whose walk cannot read the quiet logs' table back
// stops (as the process would end); neither loses anything: a scan again
// ends with the maps and records of a scan that never failed.
func TestLoadInPiecesWhoseFileCannotBeRead(t *testing.T) {
	defer func(n int) { loadPieceSessions = n }(loadPieceSessions)
	defer func(exit func(int)) { exitScan = exit }(exitScan)
	broken := errors.New("input/output error (injected)")
	home := t.TempDir()
	roots, logs := writeQuietHome(t, home, 6)
	clock := watchers.NewManualClock(time.Now())
	scan := func(data string) error {
		d := New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler), Clock: clock})
		return d.Run(context.Background())
	}
	loadPieceSessions = 1 << 30
	data, want := t.TempDir(), t.TempDir()
	if err := scan(data); err != nil {
		t.Fatal(err)
	}
	copyTree(t, data, want)
	os.Remove(logs[1])
	if err := scan(want); err != nil {
		t.Fatal(err)
	}

	loadPieceSessions = 2
	loadScratchReadFault = broken
	err := scan(data)
	loadScratchReadFault = nil
	if err == nil || !strings.Contains(err.Error(), "read back the load's file") || !strings.Contains(err.Error(), "injected") {
		t.Errorf("a load whose file cannot be read back ended with %v", err)
	}

	// The walk's reads fail: the scan stops.
	stopped := make(chan int, 1)
	exitScan = func(code int) { stopped <- code; runtime.Goexit() }
	afterLoad = func() { loadScratchReadFault = broken }
	done := make(chan error, 1)
	go func() { done <- scan(data) }()
	select {
	case code := <-stopped:
		if code != 1 {
			t.Errorf("the scan stopped with status %d, want 1", code)
		}
	case err := <-done:
		t.Errorf("the scan whose walk cannot read the table ended (%v), want it stopped", err)
	}
	afterLoad, loadScratchReadFault = nil, nil

	if err := scan(data); err != nil {
		t.Fatal(err)
	}
	sameRecords(t, "after the failed scans", want, data)
	if entries, _ := os.ReadDir(data); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasSuffix(e.Name(), ".tmp") }) {
		t.Errorf("left in the data directory: %v", entries)
	}
}

// mappedQuietTable writes n random quiet logs, after a few bytes that put
// the table off a page's start, and returns the table, mapped.
func mappedQuietTable(t *testing.T, n int) *quietTable {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the table is mapped on Linux only")
	}
	s, err := newLoadScratch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	w := s.appender("sources")
	w.write(make([]byte, 1000))
	if err := w.done(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	logs := make(quietLogs, n)
	for i := range logs {
		logs[i] = quietLog{path: rng.Uint64(), id: watchers.FileID{Dev: 1, Ino: uint64(i)}, size: int64(i)}
	}
	slices.SortFunc(logs, func(a, b quietLog) int { return cmp.Compare(a.path, b.path) })
	runs := &quietRuns{s: s}
	if err := runs.add(logs); err != nil {
		t.Fatal(err)
	}
	table, err := runs.table()
	if err != nil || table.mapped == nil {
		t.Fatalf("the table is not mapped (%v)", err)
	}
	if table.at%int64(os.Getpagesize()) == 0 {
		t.Fatal("the table starts on a page's start: the test proves less")
	}
	return table
}

// The mapped table counts as resident the pages each block read spans,
// those of the file from the table's start on, and lets them all go once
// they add up to its bound.
func TestQuietTableMappingCountsThePagesItReads(t *testing.T) {
	defer func(r int) { tableResidentBytes = r }(tableResidentBytes)
	table := mappedQuietTable(t, 3000) // 120 KB: some thirty pages
	table.stop = func(err error) { t.Fatal(err) }
	page := int64(os.Getpagesize())
	mapStart := table.at &^ (page - 1)
	tableResidentBytes = 1 << 30
	for blk := range len(table.index) {
		clear(table.touched)
		table.resident = 0
		if _, ok := table.block(blk); !ok {
			t.Fatal("block not read")
		}
		from := table.at + int64(blk*quietBlockLogs*quietLogSize)
		to := from + int64(min(quietBlockLogs, table.n-blk*quietBlockLogs)*quietLogSize)
		want := map[int64]bool{}
		for p := (from - mapStart) / page; p <= (to-1-mapStart)/page; p++ {
			want[p] = true
		}
		got := map[int64]bool{}
		for p := range int64(len(table.touched) * 64) {
			if table.touched[p/64]&(1<<(p%64)) != 0 {
				got[p] = true
			}
		}
		if !maps.Equal(got, want) || table.resident != len(want)*int(page) {
			t.Fatalf("block %d (bytes %d to %d of the file): pages %v counted, %d resident; want %v", blk, from, to, got, table.resident, want)
		}
	}
	// Bound to less than a page: every read lets everything go.
	tableResidentBytes = int(page) - 1
	for blk := range len(table.index) {
		if _, ok := table.block(blk); !ok {
			t.Fatal("block not read")
		}
		if table.resident != 0 || slices.ContainsFunc(table.touched, func(w uint64) bool { return w != 0 }) {
			t.Fatalf("block %d: %d bytes still counted resident past the bound", blk, table.resident)
		}
	}
}

// A page of the mapped table that cannot be read (here, the file cut short
// under it) stops the scan with an error that says so, not a crash.
func TestQuietTableMappingFaultIsAnError(t *testing.T) {
	table := mappedQuietTable(t, 3000)
	var stopped error
	table.stop = func(err error) { stopped = err }
	if err := table.f.f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if _, ok := table.block(len(table.index) - 1); ok || stopped == nil || !strings.Contains(stopped.Error(), "could not be read") {
		t.Fatalf("a block past the file's end read %v, stopping with %v", ok, stopped)
	}
}

// Each piece reads back the records put for it, in their order, and none
// of another's, whether its chunks were written as they filled or at the
// end.
func TestLoadedPiecesReadBackWhatWasPut(t *testing.T) {
	s, err := newLoadScratch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	for _, chunk := range []int{1, 3, 1000} {
		rng := rand.New(rand.NewPCG(uint64(chunk), 2))
		pieces := 1 + rng.IntN(6)
		p := newLoadedPieces(s, pieces)
		p.size = chunk * loadedSize
		want := make([][]loadedSource, pieces)
		for i := range 500 {
			ls := loadedSource{kind: loadedSrc, quiet: i%3 == 0, missing: i%5 == 0, session: rng.Uint64(), id: uint64(i),
				file: watchers.FileID{Dev: 7, Ino: rng.Uint64()}, path: rng.Uint64(), size: rng.Int64(), modMs: rng.Int64()}
			k := int(ls.session % uint64(pieces))
			want[k] = append(want[k], ls)
			p.put(k, appendLoaded(nil, ls))
		}
		if err := p.done(); err != nil {
			t.Fatal(err)
		}
		for k := range pieces {
			var got []loadedSource
			if err := p.each(k, func(ls loadedSource) { got = append(got, ls) }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want[k]) {
				t.Fatalf("chunks of %d records, piece %d of %d: read back %d records, want %d (or others)", chunk, k, pieces, len(got), len(want[k]))
			}
		}
	}
}

// A second scan of the corpus, after a day's changes (a Claude Code log
// appended to, another deleted), leaves the same maps and records whether
// it loads in pieces of one session (the quiet logs' table on disk, in
// blocks of two logs), in one piece, or keeps every record.
func TestSecondScanOfTheCorpusInPieces(t *testing.T) {
	defer func(n, block int, load bool) {
		loadPieceSessions, quietBlockLogs, retireOnLoad = n, block, load
	}(loadPieceSessions, quietBlockLogs, retireOnLoad)
	corpus := corpusDir(t)
	home := t.TempDir()
	for _, f := range layout(t, corpus, home, 64<<20) {
		f.write(t, len(f.data))
	}
	roots := homeRoots(runtime.GOOS, home)
	clock := watchers.NewManualClock(time.Now())
	var last *Daemon
	scan := func(data string) {
		t.Helper()
		last = New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler), Clock: clock})
		if err := last.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	inPieces, onePiece, keepsAll := t.TempDir(), t.TempDir(), t.TempDir()
	scan(inPieces)
	copyTree(t, inPieces, onePiece)
	copyTree(t, inPieces, keepsAll)

	var claude []string
	filepath.WalkDir(filepath.Join(home, ".claude"), func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".jsonl") && !strings.Contains(p, "subagents") {
			claude = append(claude, p)
		}
		return nil
	})
	if len(claude) < 3 {
		t.Fatalf("%d Claude Code logs in the corpus home", len(claude))
	}
	slices.Sort(claude)
	first, err := os.ReadFile(claude[0])
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(claude[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(first[:bytes.IndexByte(first, '\n')+1]) // its first line again
	f.Close()
	if err := os.Remove(claude[1]); err != nil {
		t.Fatal(err)
	}

	loadPieceSessions, quietBlockLogs = 1, 2
	scan(inPieces)
	if last.loadPieces < 40 || last.retiredOnLoad == 0 {
		t.Fatalf("the scan loaded in %d pieces and let go of %d sessions on load; want a piece a session, most let go of", last.loadPieces, last.retiredOnLoad)
	}
	t.Logf("in pieces: %d pieces, %d sessions let go of on load, %d taken up again", last.loadPieces, last.retiredOnLoad, last.restored)
	loadPieceSessions = 1 << 30
	scan(onePiece)
	if last.loadPieces != 0 || last.retiredOnLoad == 0 {
		t.Fatalf("the scan in one piece loaded in %d pieces and let go of %d sessions on load", last.loadPieces, last.retiredOnLoad)
	}
	retireOnLoad = false
	scan(keepsAll)
	mapsPieces, statePieces := caughtUp(t, inPieces)
	mapsOne, stateOne := caughtUp(t, onePiece)
	mapsAll, stateAll := caughtUp(t, keepsAll)
	sameCatchUp(t, "loading in pieces against one piece", mapsOne, stateOne, mapsPieces, statePieces)
	sameCatchUp(t, "loading in pieces against keeping every record", mapsAll, stateAll, mapsPieces, statePieces)
}
