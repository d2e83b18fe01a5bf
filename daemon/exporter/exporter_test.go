package exporter

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type fixture struct {
	t       testing.TB
	db      *state.DB
	data    string
	maps    string
	out     string
	clock   *watchers.ManualClock
	version map[string]int
}

func newFixture(t testing.TB) *fixture {
	dir := t.TempDir()
	db, err := state.Open(filepath.Join(dir, "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &fixture{t: t, db: db, data: dir, maps: filepath.Join(dir, "maps"), out: filepath.Join(dir, "exports"),
		clock: watchers.NewManualClock(start), version: map[string]int{}}
}

// flush writes a map for session id (new content at every call) and records
// its flush, as the daemon does.
func (f *fixture) flush(id string) {
	f.t.Helper()
	f.version[id]++
	t0 := start.UnixMilli()
	m, err := builder.Build([]event.Event{
		{Kind: event.KindSession, T: t0, Session: &event.Session{NativeID: id, AgentTool: "claude-code", Role: "root"}},
		{Kind: event.KindUser, T: t0 + 10, User: &event.User{Chars: 10 * f.version[id]}},
		{Kind: event.KindLLM, T: t0 + 100, Model: "claude-sonnet-4-5", LLM: &event.LLM{In: 5, Out: 7, Stop: "end_turn", TextChars: 3}},
		{Kind: event.KindTurnEnd, T: t0 + 101},
	}, builder.Options{Producer: "agentmap test"})
	if err != nil {
		f.t.Fatal(err)
	}
	gz, err := m.Gzip()
	if err != nil {
		f.t.Fatal(err)
	}
	rel := "claude/2026/03/" + id + ".json.gz"
	path := filepath.Join(f.maps, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, gz, 0o600); err != nil {
		f.t.Fatal(err)
	}
	sum := sha256.Sum256(gz)
	s := &state.Session{Key: "claude/" + id, Agent: "claude", NativeID: id, Gen: uint64(f.version[id]),
		Flush: &state.Flush{Path: rel, SHA256: hex.EncodeToString(sum[:]), Gen: uint64(f.version[id]), AtMs: f.clock.Now().UnixMilli()}}
	if err := f.db.PutSessions(s); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) scheduler(store Store, c Config) *Scheduler {
	f.t.Helper()
	if c.Every == 0 {
		c.Every = time.Hour
	}
	if c.Dir == "" {
		c.Dir = f.out
	}
	if c.Formats == nil {
		c.Formats = []export.Format{export.JSONL, export.AttemptDB}
	}
	if store == nil {
		store = f.db
	}
	s, err := New(Options{Store: store, MapsDir: f.maps, DataDir: f.data, Config: c, Clock: f.clock, Producer: "agentmap test"})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// sessionsIn reads the session ids of a JSON lines export.
func sessionsIn(t *testing.T, file string) []string {
	t.Helper()
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var ids []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m struct {
			Session struct {
				ID string `json:"id"`
			} `json:"session"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strings.TrimPrefix(m.Session.ID, "local:claude-code:"))
	}
	sort.Strings(ids)
	return ids
}

// seqsIn reads the source_seq of every event of an AttemptDB export.
func seqsIn(t *testing.T, file string) []uint64 {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var e struct {
			Seq uint64 `json:"source_seq"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
	}
	return seqs
}

func jsonlOf(o Outcome) string {
	for _, f := range o.Files {
		if strings.HasSuffix(f, export.JSONL.Ext()) && !strings.HasSuffix(f, export.AttemptDB.Ext()) {
			return f
		}
	}
	return ""
}

func TestIncrementalExportsEachFlushOnce(t *testing.T) {
	f := newFixture(t)
	s := f.scheduler(nil, Config{})
	f.flush("a")
	f.flush("b")
	o1, err := s.Export(f.clock.Now())
	if err != nil || len(o1.Files) != 2 {
		t.Fatalf("first export: %+v, %v", o1, err)
	}
	if got := sessionsIn(t, jsonlOf(o1)); fmt.Sprint(got) != "[a b]" {
		t.Fatalf("first export holds %v", got)
	}
	f.clock.Advance(time.Hour)
	f.flush("c")
	f.flush("a") // re-flushed with new content
	o2, err := s.Export(f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := sessionsIn(t, jsonlOf(o2)); fmt.Sprint(got) != "[a c]" {
		t.Fatalf("second export holds %v, want the re-flushed and the new session", got)
	}
	// AttemptDB's source_seq goes on from the first export.
	var adb1, adb2 string
	for _, p := range []struct {
		o   Outcome
		out *string
	}{{o1, &adb1}, {o2, &adb2}} {
		for _, file := range p.o.Files {
			if strings.HasSuffix(file, export.AttemptDB.Ext()) {
				*p.out = file
			}
		}
	}
	s1, s2 := seqsIn(t, adb1), seqsIn(t, adb2)
	if s1[0] != 1 || s2[0] != s1[len(s1)-1]+1 {
		t.Fatalf("source_seq: first export %d..%d, second starts at %d", s1[0], s1[len(s1)-1], s2[0])
	}
	f.clock.Advance(time.Hour)
	o3, err := s.Export(f.clock.Now())
	if err != nil || len(o3.Files) != 0 {
		t.Fatalf("nothing new, yet the export wrote %v (%v)", o3.Files, err)
	}
	st, _ := f.db.ExportState()
	if st.Count != 2 || st.LastSessions != 2 || st.LastError != "" || st.Pending != nil {
		t.Fatalf("cursor = %+v", st)
	}
}

func TestPolicyAllExportsEverything(t *testing.T) {
	f := newFixture(t)
	s := f.scheduler(nil, Config{Policy: All, Formats: []export.Format{export.JSONL}})
	f.flush("a")
	f.flush("b")
	for i := 0; i < 2; i++ {
		o, err := s.Export(f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if got := sessionsIn(t, jsonlOf(o)); fmt.Sprint(got) != "[a b]" {
			t.Fatalf("export %d holds %v", i, got)
		}
		f.clock.Advance(time.Hour)
	}
}

// A snapshot does not count as an incremental export: switching to
// incremental afterwards exports every session.
func TestSnapshotLeavesIncrementalRecordAlone(t *testing.T) {
	f := newFixture(t)
	f.flush("a")
	if _, err := f.scheduler(nil, Config{Policy: All}).Export(f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour)
	o, err := f.scheduler(nil, Config{}).Export(f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := sessionsIn(t, jsonlOf(o)); fmt.Sprint(got) != "[a]" {
		t.Fatalf("first incremental export holds %v", got)
	}
}

// keep prunes the oldest exports the scheduler wrote, and nothing else:
// files named as exports in the same directory that it did not write
// (another data directory's, the user's) stay.
func TestKeepPrunesOldExports(t *testing.T) {
	f := newFixture(t)
	s := f.scheduler(nil, Config{Keep: 2})
	theirs := []string{filepath.Join(f.out, "agentmap-20000101T000000Z.jsonl"), filepath.Join(f.out, "agentmap-20000101T000000Z.attemptdb.jsonl")}
	os.MkdirAll(f.out, 0o700)
	for _, p := range theirs {
		if err := os.WriteFile(p, []byte("not written by this scheduler\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		f.flush(id)
		if _, err := s.Export(f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Hour)
	}
	for _, format := range []export.Format{export.JSONL, export.AttemptDB} {
		m, _ := filepath.Glob(filepath.Join(f.out, "agentmap-*"+format.Ext()))
		n := 0
		for _, name := range m {
			if format == export.JSONL && strings.HasSuffix(name, export.AttemptDB.Ext()) {
				continue
			}
			n++
		}
		if n != 3 {
			t.Fatalf("%s: %d exports kept, want 2 and the one it did not write (%v)", format, n, m)
		}
	}
	for _, p := range theirs {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("an export it did not write was pruned: %v", err)
		}
	}
	st, err := f.db.ExportState()
	if err != nil || len(st.Owned) != 2*2 {
		t.Errorf("owned exports recorded: %+v, %v", st.Owned, err)
	}
}

// crashStore fails the commit that records an export as done, as a crash
// between writing the files and recording them would.
type crashStore struct {
	*state.DB
	fail bool
}

func (c *crashStore) CommitExport(st state.ExportState, done []state.Exported) error {
	if c.fail {
		return errors.New("simulated crash")
	}
	return c.DB.CommitExport(st, done)
}

func TestUnrecordedExportIsWrittenAgainUnderTheSameName(t *testing.T) {
	f := newFixture(t)
	cs := &crashStore{DB: f.db, fail: true}
	s := f.scheduler(cs, Config{})
	f.flush("a")
	f.flush("b")
	if _, err := s.Export(f.clock.Now()); err == nil {
		t.Fatal("a failed commit was not reported")
	}
	first, _ := filepath.Glob(filepath.Join(f.out, "agentmap-*"))
	if len(first) != 2 {
		t.Fatalf("files of the unrecorded export: %v", first)
	}
	st, _ := f.db.ExportState()
	if st.Pending == nil || st.LastError == "" || st.Failures != 1 {
		t.Fatalf("cursor after the failed commit = %+v", st)
	}
	// A kill mid-write would have left a temporary file of that stamp.
	leftover := filepath.Join(f.out, "."+filepath.Base(first[0])+".tmp-123")
	os.WriteFile(leftover, []byte("partial"), 0o600)
	os.Chtimes(leftover, f.clock.Now(), f.clock.Now()) // left when the attempt was killed
	// Later, after a restart: a new session arrived meanwhile.
	f.clock.Advance(2 * time.Hour)
	f.flush("c")
	cs.fail = false
	s = f.scheduler(cs, Config{})
	o, err := s.Export(f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(o.Files)
	if fmt.Sprint(o.Files) != fmt.Sprint(first) {
		t.Fatalf("retry wrote %v, want the same files %v", o.Files, first)
	}
	if got := sessionsIn(t, jsonlOf(o)); fmt.Sprint(got) != "[a b]" {
		t.Fatalf("retry holds %v, want the pending selection", got)
	}
	if _, err := os.Stat(leftover); err == nil {
		t.Fatal("the temporary file of the interrupted export is still there")
	}
	f.clock.Advance(time.Hour)
	o, err = s.Export(f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := sessionsIn(t, jsonlOf(o)); fmt.Sprint(got) != "[c]" {
		t.Fatalf("next export holds %v, want only the new session", got)
	}
}

// flushDuringStore flushes a session again right after an export's
// selection is recorded, as the daemon may while an export runs.
type flushDuringStore struct {
	*state.DB
	again func()
}

func (s *flushDuringStore) PutExportState(st state.ExportState) error {
	if err := s.DB.PutExportState(st); err != nil {
		return err
	}
	if st.Pending != nil && s.again != nil {
		s.again()
		s.again = nil
	}
	return nil
}

// A map flushed again between the selection and the writing of an export
// is exported as the export read it, and that content is what is recorded:
// the next export does not hold it a second time.
func TestMapFlushedAgainDuringAnExportIsExportedOnce(t *testing.T) {
	f := newFixture(t)
	f.flush("a")
	f.flush("b")
	store := &flushDuringStore{DB: f.db, again: func() { f.flush("a") }}
	s := f.scheduler(store, Config{})
	o, err := s.Export(f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := sessionsIn(t, jsonlOf(o)); fmt.Sprint(got) != "[a b]" {
		t.Fatalf("export holds %v", got)
	}
	raw, err := os.ReadFile(jsonlOf(o))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"chars":20`) {
		t.Fatal("the export does not hold the content flushed last")
	}
	f.clock.Advance(time.Hour)
	o, err = s.Export(f.clock.Now())
	if err != nil || len(o.Files) != 0 {
		t.Fatalf("the next export wrote %v (%v): the map flushed during the first is exported twice", o.Files, err)
	}
}

func TestMissingMapStaysDue(t *testing.T) {
	f := newFixture(t)
	s := f.scheduler(nil, Config{Formats: []export.Format{export.JSONL}})
	f.flush("a")
	f.flush("b")
	gone := filepath.Join(f.maps, "claude", "2026", "03", "b.json.gz")
	saved, _ := os.ReadFile(gone)
	os.Remove(gone)
	o, err := s.Export(f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := sessionsIn(t, jsonlOf(o)); fmt.Sprint(got) != "[a]" {
		t.Fatalf("export holds %v", got)
	}
	os.WriteFile(gone, saved, 0o600)
	f.clock.Advance(time.Hour)
	o, err = s.Export(f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := sessionsIn(t, jsonlOf(o)); fmt.Sprint(got) != "[b]" {
		t.Fatalf("the map left out was not exported later: %v", got)
	}
}

// Run retries a failing export with back-off on its clock and reports the
// error in the cursor until an attempt succeeds.
func TestRunRetriesAndReports(t *testing.T) {
	f := newFixture(t)
	f.flush("a")
	blocker := filepath.Join(f.data, "blocked")
	os.WriteFile(blocker, nil, 0o600) // a file where the directory should be
	s := f.scheduler(nil, Config{Every: time.Hour, Dir: filepath.Join(blocker, "exports")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	until := func(what string, cond func(state.ExportState) bool) {
		t.Helper()
		for i := 0; i < 100000; i++ {
			if st, _ := f.db.ExportState(); cond(st) {
				return
			}
			f.clock.Advance(time.Second)
			runtime.Gosched()
		}
		t.Fatalf("never: %s", what)
	}
	until("a failure is reported", func(st state.ExportState) bool { return st.Failures >= 2 && st.LastError != "" })
	if st, _ := f.db.ExportState(); strings.Contains(st.LastError, "claude") {
		t.Fatalf("the error names a session: %s", st.LastError)
	}
	os.Remove(blocker)
	until("the retry succeeds", func(st state.ExportState) bool { return st.Count == 1 && st.LastError == "" && st.Failures == 0 })
}

func TestNewRefusesBadSchedules(t *testing.T) {
	f := newFixture(t)
	for name, c := range map[string]Config{
		"no period":     {Dir: "x", Formats: []export.Format{export.JSONL}},
		"no dir":        {Every: time.Hour, Formats: []export.Format{export.JSONL}},
		"no format":     {Every: time.Hour, Dir: "x"},
		"unknown":       {Every: time.Hour, Dir: "x", Formats: []export.Format{"csv"}},
		"twice":         {Every: time.Hour, Dir: "x", Formats: []export.Format{export.JSONL, export.JSONL}},
		"negative keep": {Every: time.Hour, Dir: "x", Formats: []export.Format{export.JSONL}, Keep: -1},
		"no window":     {Every: time.Hour, Dir: "x", Formats: []export.Format{export.JSONL}, Policy: Window},
	} {
		if _, err := New(Options{Store: f.db, Config: c}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestWindowKeepsRecentSessions(t *testing.T) {
	f := newFixture(t)
	f.flush("a") // started at start
	s := f.scheduler(nil, Config{Policy: Window, Window: 7 * 24 * time.Hour, Formats: []export.Format{export.JSONL}})
	f.clock.Advance(24 * time.Hour)
	o, err := s.Export(f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := sessionsIn(t, jsonlOf(o)); fmt.Sprint(got) != "[a]" {
		t.Fatalf("export within the window holds %v", got)
	}
	f.clock.Advance(30 * 24 * time.Hour)
	o, err = s.Export(f.clock.Now())
	if err != nil || len(o.Files) != 0 {
		t.Fatalf("a session out of the window was exported: %v (%v)", o.Files, err)
	}
}

// The first export of a run is due one period after the last attempt,
// whatever happened in between; at once when one is pending or failed.
func TestFirstDue(t *testing.T) {
	f := newFixture(t)
	s := f.scheduler(nil, Config{Every: time.Hour})
	if got := s.firstDue(); !got.Equal(start.Add(time.Hour)) {
		t.Fatalf("never exported: due %v, want one period after start", got)
	}
	f.db.PutExportState(state.ExportState{AttemptMs: start.Add(-20 * time.Minute).UnixMilli()})
	if got := s.firstDue(); !got.Equal(start.Add(40 * time.Minute)) {
		t.Fatalf("attempted 20 min ago: due %v", got)
	}
	f.db.PutExportState(state.ExportState{AttemptMs: start.Add(-3 * time.Hour).UnixMilli()})
	if got := s.firstDue(); !got.Equal(start) {
		t.Fatalf("overdue: due %v, want now", got)
	}
	f.db.PutExportState(state.ExportState{AttemptMs: start.UnixMilli(), Failures: 1})
	if got := s.firstDue(); !got.Equal(start) {
		t.Fatalf("failed: due %v, want now", got)
	}
	f.db.PutExportState(state.ExportState{AttemptMs: start.UnixMilli(), Pending: &state.PendingExport{StampMs: 1}})
	if got := s.firstDue(); !got.Equal(start) {
		t.Fatalf("pending: due %v, want now", got)
	}
	f.db.PutExportState(state.ExportState{AttemptMs: start.Add(48 * time.Hour).UnixMilli()})
	if got := s.firstDue(); !got.Equal(start.Add(time.Hour)) {
		t.Fatalf("attempt in the future (clock set back): due %v, want one period from now", got)
	}
}

// A file of the pending export's names that its attempt did not write
// (another data directory exporting into the same directory in the same
// second) is never removed by the retry: the retry takes the next free
// stamp; and a first attempt whose stamp is taken does the same.
func TestRetryLeavesAnotherWritersFileOfItsName(t *testing.T) {
	f := newFixture(t)
	cs := &crashStore{DB: f.db, fail: true}
	s := f.scheduler(cs, Config{})
	f.flush("a")
	if _, err := s.Export(f.clock.Now()); err == nil {
		t.Fatal("a failed commit was not reported")
	}
	mine, _ := filepath.Glob(filepath.Join(f.out, "agentmap-*"))
	if len(mine) != 2 {
		t.Fatalf("files of the unrecorded export: %v", mine)
	}
	// Another writer's export of the same names, in place of this one's.
	for _, p := range mine {
		os.Remove(p)
		if err := os.WriteFile(p, []byte("another data directory's export\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cs.fail = false
	o, err := s.Export(f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mine {
		if b, err := os.ReadFile(p); err != nil || string(b) != "another data directory's export\n" {
			t.Errorf("the retry removed or wrote over %s, which it did not write: %q %v", p, b, err)
		}
		if slices.Contains(o.Files, p) {
			t.Errorf("the retry wrote %s again", p)
		}
	}
	if got := sessionsIn(t, jsonlOf(o)); fmt.Sprint(got) != "[a]" || len(o.Files) != 2 {
		t.Fatalf("retry wrote %v holding %v", o.Files, got)
	}

	// A first attempt whose stamp is taken writes under the next one.
	f.clock.Advance(time.Hour)
	f.flush("b")
	taken := filepath.Join(f.out, export.FileName(export.JSONL, f.clock.Now().UTC().Truncate(time.Second)))
	os.WriteFile(taken, []byte("theirs\n"), 0o600)
	if o, err = s.Export(f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(taken); string(b) != "theirs\n" || slices.Contains(o.Files, taken) {
		t.Errorf("an export wrote over or removed a file of its stamp it did not write: %q, wrote %v", b, o.Files)
	}
}
