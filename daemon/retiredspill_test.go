package daemon

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/watchers"
)

// The scans of these tests, again with every session spilled as soon as it
// is let go of: a session read back from the spill file, a log renamed
// onto a spilled log's identity and the counts must come out as from
// memory, with the keys' hashes apart and colliding.
func TestScansSpillingEverySessionLetGoOf(t *testing.T) {
	defer func(n int) { retiredSpillAt = n }(retiredSpillAt)
	retiredSpillAt = 1
	var open []*retiredSpill // the tests look at the retired set after a scan
	spillsLeftOpen = &open
	defer func() {
		spillsLeftOpen = nil
		for _, s := range open {
			s.close()
		}
		spilled := 0
		for _, s := range open {
			spilled += len(s.runs)
		}
		if spilled == 0 {
			t.Error("no scan spilled")
		}
	}()
	t.Run("written early", TestHeldEventsMakeTheMapsOfReadBack)
	t.Run("quiet on load", TestQuietSessionsAreLetGoOfOnLoad)
	t.Run("changed after the load", TestQuietLogsChangedAfterTheLoad)
	t.Run("renamed", TestRetiredLogRenamedDuringTheScanIsFollowed)
	t.Run("walk in pieces", TestWalkInPiecesCommitsWhatOneWalkCommits)
	t.Run("keys hash alike", TestRetiredSessionsWhoseKeysHashAlike)
}

// A retired set that spills must answer every question as one that keeps
// everything in memory: random sessions retired, looked up by key and by
// log identity, taken up again (some retired again), identities taken
// over by newer sessions, with spills every few sessions and keys whose
// hashes collide.
func TestRetiredSetSpilledAnswersAsInMemory(t *testing.T) {
	for _, collide := range []bool{false, true} {
		for seed := uint64(1); seed <= 12; seed++ {
			t.Run(fmt.Sprintf("collide %v seed %d", collide, seed), func(t *testing.T) {
				if collide {
					defer func(h func(string) uint64) { retiredKeyHash = h }(retiredKeyHash)
					retiredKeyHash = func(key string) uint64 { return uint64(crc32.ChecksumIEEE([]byte(key)) % 40) }
				}
				defer func(n int) { retiredSpillAt = n }(retiredSpillAt)
				rng := rand.New(rand.NewPCG(seed, 7))
				retiredSpillAt = 1 + rng.IntN(6)
				spill, err := newRetiredSpill(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				defer spill.close()
				var mem, disk retiredSet
				disk.spill = spill
				type session struct {
					key   string
					ids   []uint64
					files []watchers.FileID
				}
				var all []session
				nextID := uint64(1)
				file := func() watchers.FileID { return watchers.FileID{Dev: 1, Ino: uint64(rng.IntN(60) + 1)} }
				for i := range 120 {
					s := session{key: fmt.Sprintf("claude/s%d", i)}
					for range 1 + rng.IntN(3) {
						s.ids = append(s.ids, nextID)
						s.files = append(s.files, file())
						nextID++
					}
					all = append(all, s)
				}
				check := func(step int) {
					t.Helper()
					if mem.len() != disk.len() || mem.counted != disk.counted {
						t.Fatalf("step %d: len %d/%d, counted %d/%d", step, mem.len(), disk.len(), mem.counted, disk.counted)
					}
					if !slices.Equal(mem.agents, disk.agents) {
						t.Fatalf("step %d: agents %v / %v", step, mem.agents, disk.agents)
					}
					for _, s := range all {
						h1, ids1, ok1 := mem.lookup(s.key)
						h2, ids2, ok2 := disk.lookup(s.key)
						if h1 != h2 || ok1 != ok2 || !slices.Equal(ids1, ids2) {
							t.Fatalf("step %d: lookup %s: %v %v / %v %v", step, s.key, ids1, ok1, ids2, ok2)
						}
						if ok1 && (mem.held(h1) != disk.held(h2) || mem.summed(h1) != disk.summed(h2) || mem.loaded(h1) != disk.loaded(h2)) {
							t.Fatalf("step %d: flags of %s differ", step, s.key)
						}
					}
					for ino := uint64(1); ino <= 61; ino++ {
						id := watchers.FileID{Dev: 1, Ino: ino}
						h1, ids1, ok1 := mem.byFile(id)
						h2, ids2, ok2 := disk.byFile(id)
						if h1 != h2 || ok1 != ok2 || !slices.Equal(ids1, ids2) || mem.hasFile(id) != disk.hasFile(id) {
							t.Fatalf("step %d: by file %d: %x %v %v / %x %v %v", step, ino, h1, ids1, ok1, h2, ids2, ok2)
						}
					}
					if step%100 != 99 {
						return
					}
					var e1, e2 []string
					mem.each(func(h uint64, ids []uint64) { e1 = append(e1, fmt.Sprint(h, ids)) })
					disk.each(func(h uint64, ids []uint64) { e2 = append(e2, fmt.Sprint(h, ids)) })
					slices.Sort(e1)
					slices.Sort(e2)
					if !slices.Equal(e1, e2) {
						t.Fatalf("step %d: each %v / %v", step, e1, e2)
					}
				}
				for step := range 400 {
					s := all[rng.IntN(len(all))]
					if _, _, retired := mem.lookup(s.key); !retired || rng.IntN(3) == 0 {
						e := retiredEntry{key: s.key, agent: []string{"claude", "codex"}[rng.IntN(2)], ids: s.ids,
							files: s.files, logs: rng.IntN(3), counted: rng.IntN(2) == 0, summed: rng.IntN(2) == 0}
						if a, b := mem.addEntry(e), disk.addEntry(e); a != b {
							t.Fatalf("step %d: add %s: %v / %v", step, s.key, a, b)
						}
					} else {
						h := retiredKeyHash(s.key)
						mem.remove(h, s.files, nil)
						disk.remove(h, s.files, nil)
					}
					if step%4 == 3 {
						check(step)
					}
				}
				if spill.err != nil || spill.writeErr != nil {
					t.Fatal(spill.err, spill.writeErr)
				}
				if len(spill.runs) == 0 {
					t.Fatal("nothing was spilled")
				}
			})
		}
	}
}

// A spill file that cannot be read back, in the set alone: the failure is
// kept, and no session is let go of with a hash that may be a spilled
// one's. (A scan stops at the failure: TestSpillUnreadableStopsTheScan.)
func TestSpillReadFailureIsKept(t *testing.T) {
	defer func(n int) { retiredSpillAt = n }(retiredSpillAt)
	retiredSpillAt = 1
	spill, err := newRetiredSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var r retiredSet
	r.spill = spill
	if !r.add("claude/a", []uint64{1}, []watchers.FileID{{Dev: 1, Ino: 1}}, true) {
		t.Fatal("refused")
	}
	if len(spill.runs) != 1 {
		t.Fatalf("%d runs", len(spill.runs))
	}
	spill.f.Close() // every read fails from now on
	r.lookup("claude/a")
	if spill.err == nil {
		t.Fatal("a failed read was not kept")
	}
	if r.add("claude/a", []uint64{2}, nil, true) {
		t.Error("a session was let go of with a hash that may be taken")
	}
}

// The spill file leaves nothing behind in the data directory.
func TestSpillFileLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	spill, err := newRetiredSpill(dir)
	if err != nil {
		t.Fatal(err)
	}
	spill.close()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Fatalf("left in the data directory: %v %v", entries, err)
	}
}

// A scan whose spill file fails to give back the sessions it let go of
// stops there, with the exit status of an error, and loses nothing: a
// Codex parent rollout written early and spilled, whose child rollout is
// met in the next day's directory, is where the read fails, and a scan
// again ends with the maps and records of a scan that never failed. The
// failing scan runs in a process of its own, as it ends the process.
func TestSpillUnreadableStopsTheScan(t *testing.T) {
	defer func(n, h int) { retiredSpillAt, holdEvents = n, h }(retiredSpillAt, holdEvents)
	retiredSpillAt, holdEvents = 1, 50
	if data := os.Getenv("AGENTMAP_TEST_SPILL_DATA"); data != "" {
		spillReadFault = errors.New("injected read failure")
		d := New(Options{DataDir: data, Once: true, Roots: homeRoots(runtime.GOOS, os.Getenv("AGENTMAP_TEST_SPILL_HOME")),
			Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
		err := d.Run(context.Background())
		fmt.Fprintln(os.Stderr, "the scan ended:", err)
		os.Exit(0) // not reached: the failed read ends the process with status 1
	}
	home := t.TempDir()
	writeParentWithLateChild(t, home)
	roots := homeRoots(runtime.GOOS, home)
	scan := func(data string) error {
		return New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler)}).Run(context.Background())
	}
	clean := t.TempDir()
	if err := scan(clean); err != nil {
		t.Fatal(err)
	}
	wantMaps, wantState := caughtUp(t, clean)

	data := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSpillUnreadableStopsTheScan$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AGENTMAP_TEST_SPILL_DATA="+data, "AGENTMAP_TEST_SPILL_HOME="+home)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("the scan whose spill file fails: %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "the scan stops") || !strings.Contains(string(out), "injected read failure") {
		t.Errorf("the scan stopped without saying why:\n%s", out)
	}
	if err := scan(data); err != nil {
		t.Fatalf("the scan after: %v", err)
	}
	gotMaps, gotState := caughtUp(t, data)
	if diff := diffMaps(gotMaps, wantMaps); len(diff) > 0 {
		t.Errorf("maps after the stopped scan and one more: %v", diff)
	}
	if gotState != wantState {
		t.Error("records after the stopped scan and one more differ from a scan that never stopped")
	}
}
