package daemon

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

var (
	randomHistories = flag.Int("random-histories", 4,
		"how many random histories (seeds 1 to N) TestRetiringDaemonMatchesKeepingDaemonOnRandomHistories plays")
	randomHistorySteps = flag.Int("random-history-steps", 40, "how many steps each of those histories has")
	randomHistorySeed  = flag.Uint64("random-history-seed", 0, "play only the random history of this seed")
	// Histories with privacy.exclude reloads: the lines name a working
	// directory per session and, now and then, a reload covers one more
	// (or none). On by default; -random-history-exclude=false plays the
	// histories of before, whose steps are drawn without them.
	randomHistoryExclude = flag.Bool("random-history-exclude", true, "play histories with privacy.exclude reloads")
)

// A daemon that lets go of its quiet sessions must end any history as one
// that keeps them all does: the same maps, state records and status. Random
// histories of a few sessions (their logs grown, deleted and written back,
// rewritten in place, truncated, replaced, moved onto one another's names;
// subagent logs and child sessions joining them; a line that cannot be
// read; flush and scan commands; both daemons restarted) are played to
// two homes at once, one followed by a daemon that lets go of every
// session as soon as it may, the other by one that never does. After each step both must settle on
// the same maps and records, and the first must have looked at its
// sessions again before the next step, so that each step meets the
// sessions it may touch let go of. Every other history is played with the
// retired set's hashes colliding. A failure logs its seed and steps.
func TestRetiringDaemonMatchesKeepingDaemonOnRandomHistories(t *testing.T) {
	defer func(n, w int) { compactMapsFrom, walkChunk = n, w }(compactMapsFrom, walkChunk)
	compactMapsFrom, walkChunk = 1, 2 // the maps rebuilt as sessions leave; the first catch-up read in pieces
	first, last := uint64(1), uint64(*randomHistories)
	if *randomHistorySeed != 0 {
		first, last = *randomHistorySeed, *randomHistorySeed
	}
	for seed := first; seed <= last; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			if seed%2 == 0 {
				// The hashes the retired sessions are kept by, made to
				// collide: a collision must cost room, never a session.
				defer func(k, p, q func(string) uint64) { retiredKeyHash, retiredPathHash, quietPathHash = k, p, q }(retiredKeyHash, retiredPathHash, quietPathHash)
				retiredKeyHash = func(key string) uint64 { return uint64(crc32.ChecksumIEEE([]byte(key)) % 3) }
				retiredPathHash = func(path string) uint64 { return uint64(crc32.ChecksumIEEE([]byte(path)) % 5) }
				quietPathHash = func(path string) uint64 { return uint64(crc32.ChecksumIEEE([]byte(path)) % 4) }
				t.Log("the retired set's hashes collide")
			}
			playRandomHistory(t, seed, *randomHistorySteps)
		})
	}
}

func playRandomHistory(t *testing.T, seed uint64, steps int) {
	t.Logf("seed %d", seed)
	h := newHistory(seed)
	first := h.firstLogs()
	var passes retirePasses
	retiredHook = passes.note // only a daemon that lets go of sessions calls it (letsGo)
	defer func() { retiredHook = nil }()
	kept := startHome(t, "keeps all", -1, first)
	defer func() { kept.f.stop() }() // the daemon of the moment: a step may restart it
	retiring := startHome(t, "lets go", time.Nanosecond, first)
	defer func() { retiring.f.stop() }()
	settle(t, kept, retiring, &passes, "the first catch-up")

	for i := 1; i <= steps; i++ {
		s := h.next()
		t.Logf("step %d: %s", i, s)
		switch s.kind {
		case restartDaemons:
			var changes []step
			if s.during != nil {
				changes = []step{*s.during}
			}
			kept.restartChanging(changes)
			retiring.restartChanging(changes)
		case excludeSessions:
			kept.exclude(s)
			retiring.exclude(s)
		case flushOne, flushAll, scanAll:
			k, r := kept.command(s), retiring.command(s)
			if k != r {
				t.Fatalf("step %d (%s): the daemon that keeps all answered\n%s\nthe one that lets go\n%s", i, s, k, r)
			}
		default:
			kept.apply(s)
			retiring.apply(s)
		}
		settle(t, kept, retiring, &passes, fmt.Sprintf("step %d (%s)", i, s))
		t.Logf("step %d settled: %d sessions let go of", i, passes.last.Load())
	}

	keptEnd, retiringEnd := kept.finish(), retiring.finish()
	if keptEnd != retiringEnd {
		t.Errorf("at the end, the daemon that keeps all has\n%s\nthe one that lets go\n%s\ndiffering:\n%s",
			keptEnd, retiringEnd, differing(keptEnd, retiringEnd))
	}
	restored := retiring.restored + retiring.f.d.restored
	if n := kept.f.d.retired.len(); n != 0 || passes.most.Load() == 0 || restored == 0 {
		t.Errorf("the history proves nothing: %d sessions let go of at most (%d by the daemon that keeps all), %d taken up again",
			passes.most.Load(), n, restored)
	}
	t.Logf("seed %d: %d sessions let go of at most, %d taken up again", seed, passes.most.Load(), restored)
}

// retirePasses counts the looks a daemon that lets go of sessions takes at
// them (retiredHook, called from its loop alone), and how many sessions it
// had let go of then.
type retirePasses struct {
	n, last, most atomic.Int64
}

func (p *retirePasses) note(retired int) {
	p.last.Store(int64(retired))
	if int64(retired) > p.most.Load() {
		p.most.Store(int64(retired))
	}
	p.n.Add(1)
}

// settle waits until both daemons have read every log as it is on disk and
// written every map, agree on the maps and records, and the one that lets
// go of sessions has since looked at them twice (a look may have begun
// before they settled): whatever it may let go of, it has.
func settle(t *testing.T, kept, retiring *home, passes *retirePasses, after string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	since := int64(-1)
	for {
		k, kWhy := kept.settled()
		r, rWhy := retiring.settled()
		switch {
		case kWhy != "" || rWhy != "" || k != r:
			since = -1
		case since < 0:
			since = passes.n.Load()
		case passes.n.Load() >= since+2:
			// The status, published a turn of the loop later, counts alike.
			kSt, rSt := kept.status(), retiring.status()
			if kSt == rSt {
				return
			}
			k, r = k+"\n"+kSt, r+"\n"+rSt
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, the daemons did not settle alike (the steps are logged above).\n"+
				"The daemon that keeps all (%s):\n%s\nthe one that lets go (%s):\n%s\ndiffering:\n%s",
				after, orSettled(kWhy), k, orSettled(rWhy), r, differing(k, r))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func orSettled(why string) string {
	if why == "" {
		return "settled"
	}
	return why
}

// differing lists the lines only one of two texts has.
func differing(a, b string) string {
	count := map[string]int{}
	for _, l := range strings.Split(a, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(b, "\n") {
		count[l]--
	}
	var out []string
	for l, n := range count {
		switch {
		case n > 0:
			out = append(out, "only keeping all: "+l)
		case n < 0:
			out = append(out, "only letting go:  "+l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// home is one of the two homes a history is played to, with its daemon.
type home struct {
	t    *testing.T
	name string
	r    *rig
	f    *following
	opt  Options
	// restored counts the sessions taken up again by the daemons before
	// the one running (restart).
	restored int
	trash    string // the files of deleted and replaced logs (see keep)
	spare    string // files written whole before they are renamed into place
	files    int
	excluded []string // the working directories privacy.exclude covers
}

func startHome(t *testing.T, name string, retireAfter time.Duration, first []step) *home {
	t.Helper()
	r, opt := quickRig(t, retireAfter)
	opt.Logger = opt.Logger.With("home", name)
	h := &home{t: t, name: name, r: r, opt: opt, trash: filepath.Join(r.home, "trash"), spare: filepath.Join(r.home, "spare")}
	for _, dir := range []string{h.trash, h.spare} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range first {
		h.apply(s)
	}
	h.f = &following{t: t, r: r, retireAfter: retireAfter}
	h.f.d = New(opt)
	h.f.stop = follow(t, h.f.d)
	h.f.client() // the control socket is served: the state database is open
	return h
}

func (h *home) path(rel string) string {
	return filepath.Join(h.r.root.Dir, "projects", filepath.FromSlash(rel))
}

// apply makes a step's change to the logs. Each change is seen whole or
// not at all (a log appears with its content, by a rename), but for lines
// appended, of which a daemon may see the first ones first: what a daemon
// makes of a change must not hang on when it looks. No file of a log is
// ever freed (keep): a new file never takes the identity of a log gone in
// one home and not in the other.
func (h *home) apply(s step) {
	h.t.Helper()
	p := h.path(s.path)
	var err error
	switch s.kind {
	case appendLines:
		var f *os.File
		if f, err = os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0); err == nil {
			_, err = f.WriteString(s.content)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	case createLog:
		err = h.renameIn(p, s.content)
	case deleteLog:
		err = os.Rename(p, h.trashName())
	case truncateLog:
		err = os.Truncate(p, s.size)
	case overwriteLog: // one write over the old content, longer than it: never seen shorter
		var f *os.File
		if f, err = os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			_, err = f.WriteAt([]byte(s.content), 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	case replaceLog:
		if err = h.keep(p); err == nil {
			err = h.renameIn(p, s.content)
		}
	case moveLog:
		to := h.path(s.to)
		if _, serr := os.Stat(to); serr == nil {
			err = h.keep(to)
		}
		if err == nil {
			err = os.MkdirAll(filepath.Dir(to), 0o700)
		}
		if err == nil {
			err = os.Rename(p, to)
		}
	default:
		err = fmt.Errorf("not a change to the logs: %s", s)
	}
	if err != nil {
		h.t.Fatalf("%s: %s: %v", h.name, s, err)
	}
}

func (h *home) trashName() string {
	h.files++
	return filepath.Join(h.trash, fmt.Sprint(h.files))
}

// keep links a log's file into the trash before its name goes to another:
// the inode stays taken. (Freed, it may be the next new file's, in one
// home and not in the other, and the daemons may rightly take the new
// file for the old one moved: its head is another, but its identity a
// deleted log's.)
func (h *home) keep(p string) error { return os.Link(p, h.trashName()) }

// renameIn puts a file with content at p in one step.
func (h *home) renameIn(p, content string) error {
	h.files++
	tmp := filepath.Join(h.spare, fmt.Sprint(h.files))
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// exclude reloads the daemon with privacy.exclude covering one more
// session's working directory, or none (s.id ""); a restart keeps them.
func (h *home) exclude(s step) {
	h.t.Helper()
	h.setExcluded(s)
	h.f.d.Reconfigure(Live{Idle: h.opt.Idle, TurnEndQuiet: h.opt.TurnEndQuiet, Roots: h.opt.Roots, Mapper: h.opt.Mapper,
		Exclude: h.opt.Exclude, ExcludeKey: h.opt.ExcludeKey})
}

// setExcluded sets the options' privacy.exclude to cover one more
// session's working directory, or none (s.id "").
func (h *home) setExcluded(s step) {
	if s.id == "" {
		h.excluded = nil
	} else {
		h.excluded = append(h.excluded, historyCWD(s.id))
	}
	dirs := slices.Clone(h.excluded)
	h.opt.Exclude, h.opt.ExcludeKey = nil, ""
	if len(dirs) > 0 {
		h.opt.Exclude = func(dir string) bool { return slices.Contains(dirs, dir) }
		h.opt.ExcludeKey = strings.Join(dirs, ",")
	}
}

// historyCWD is the working directory a history's session names.
func historyCWD(session string) string { return "/w/" + session }

// command sends a step's command to the daemon and says what it answered.
func (h *home) command(s step) string {
	h.t.Helper()
	ctx := context.Background()
	switch s.kind {
	case flushOne, flushAll:
		res, err := h.f.client().Flush(ctx, s.id, s.kind == flushAll)
		return fmt.Sprintf("flushed %v current %d failed %v error %v", res.Flushed, res.Current, res.Failed, err)
	case scanAll:
		res, err := h.f.client().Scan(ctx)
		return fmt.Sprintf("files %d bytes %d sessions %d flushed %v current %d failed %v error %v",
			res.Files, res.Bytes, res.Sessions, res.Flush.Flushed, res.Flush.Current, res.Flush.Failed, err)
	}
	h.t.Fatalf("not a command: %s", s)
	return ""
}

// status is what the daemon's status counts.
func (h *home) status() string {
	h.t.Helper()
	st, err := h.f.client().Status(context.Background())
	if err != nil {
		h.t.Fatalf("%s: %v", h.name, err)
	}
	var out []string
	for _, a := range st.Agents {
		out = append(out, fmt.Sprintf("status %s: files %d live %d flushed %d behind %d skipped %d",
			a.Agent, a.Files, a.Live, a.Flushed, a.Behind, a.Skipped))
	}
	for _, s := range st.SkippedSessions {
		out = append(out, fmt.Sprintf("status: %s has %d skipped lines", s.Session, s.Lines))
	}
	return strings.Join(out, "\n")
}

// keptOut reports whether privacy.exclude keeps the log at p out: its first
// line names a working directory it covers.
func (h *home) keptOut(p string) bool {
	b, err := os.ReadFile(p)
	if err != nil || len(h.excluded) == 0 {
		return false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	var l struct {
		CWD string `json:"cwd"`
	}
	json.Unmarshal([]byte(first), &l)
	return slices.Contains(h.excluded, l.CWD)
}

// settled returns the maps and state records of the home (seen), and why its
// daemon has not settled yet ("" when it has): a log on disk that no record
// follows to its end with the file's identity, a log gone that a record
// still follows, a session whose map is not written for its last change.
func (h *home) settled() (seen, why string) {
	h.f.d.snap.mu.Lock() // Run sets the database under it
	db := h.f.d.db
	h.f.d.snap.mu.Unlock()
	srcs, sessions, err := db.Load()
	if err != nil {
		h.t.Fatalf("%s: %v", h.name, err)
	}
	seen = h.mapsAndRecords(srcs, sessions)
	onDisk := map[string]os.FileInfo{}
	projects := filepath.Join(h.r.root.Dir, "projects")
	filepath.WalkDir(projects, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				onDisk[p] = fi
			}
		}
		return nil
	})
	// Of the records of a path, one follows the file there to its end:
	// the others are of logs gone from it (deleted, moved, replaced).
	followed := map[string]bool{}
	rel := func(p string) string { r, _ := filepath.Rel(projects, p); return filepath.ToSlash(r) }
	for _, s := range srcs {
		if s.Missing {
			continue
		}
		fi, there := onDisk[s.Path]
		if !there {
			return seen, fmt.Sprintf("%s is followed but not there", rel(s.Path))
		}
		if watchers.StatID(fi) == (watchers.FileID{Dev: s.Dev, Ino: s.Ino}) && fi.Size() == s.Offset {
			followed[s.Path] = true
		}
	}
	for p, fi := range onDisk {
		if !followed[p] && fi.Size() > 0 && !h.keptOut(p) { // an empty log routes nowhere yet
			return seen, fmt.Sprintf("%s is not followed to its end", rel(p))
		}
	}
	for _, s := range sessions {
		if s.Dirty() {
			return seen, fmt.Sprintf("the map of %s is not written for its last change", s.Key)
		}
	}
	return seen, ""
}

// mapsAndRecords is every map in the home's store and its state records.
func (h *home) mapsAndRecords(srcs []*state.Source, sessions []*state.Session) string {
	var lines []string
	root := MapsDir(h.r.data)
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		if err != nil {
			b = []byte(err.Error()) // gone as it was read: the next look sees
		}
		lines = append(lines, fmt.Sprintf("map %s: %s", filepath.ToSlash(rel), strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "; ")))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(append(lines, recordLines(h.r.home, srcs, sessions)...), "\n")
}

// finish stops the daemon once its status counts nothing live, and returns
// that status, its maps and its records as committed.
func (h *home) finish() string {
	h.f.status("at the end")
	h.f.stop()
	db := openState(h.t, h.r)
	defer db.Close()
	srcs, sessions, err := db.Load()
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.Join(h.f.out, "\n") + "\n" + h.mapsAndRecords(srcs, sessions)
}

// A step of a history: a change to the logs or a command.
type step struct {
	kind    stepKind
	path    string // the log's, under the projects directory
	to      string // where a log is moved
	content string // the lines appended, or the log's whole new content
	size    int64  // what a log is truncated to
	id      string // the session a flush names
	// during is, for a restart, a change to the logs made between each
	// daemon's load of its records and its watcher's first look at them.
	during *step
}

type stepKind int

const (
	appendLines stepKind = iota
	createLog            // a new log, or a deleted one back, with its content
	deleteLog
	truncateLog
	overwriteLog // rewritten in place, longer
	replaceLog   // another file under the name
	moveLog
	flushOne
	flushAll
	scanAll
	restartDaemons
	excludeSessions // privacy.exclude reloaded: one more session's directory, or none
)

func (s step) String() string {
	switch s.kind {
	case appendLines:
		return fmt.Sprintf("append to %s: %s", s.path, oneLine(s.content))
	case createLog:
		return fmt.Sprintf("create %s: %s", s.path, oneLine(s.content))
	case deleteLog:
		return "delete " + s.path
	case truncateLog:
		return fmt.Sprintf("truncate %s to %d bytes", s.path, s.size)
	case overwriteLog:
		return fmt.Sprintf("overwrite %s in place: %s", s.path, oneLine(s.content))
	case replaceLog:
		return fmt.Sprintf("replace %s by a new file: %s", s.path, oneLine(s.content))
	case moveLog:
		return fmt.Sprintf("move %s to %s", s.path, s.to)
	case flushOne:
		return "flush " + s.id
	case flushAll:
		return "flush --all"
	case scanAll:
		return "scan"
	case restartDaemons:
		if s.during != nil {
			return "restart the daemons, with a change between the load and the first look at the logs: " + s.during.String()
		}
		return "restart the daemons"
	case excludeSessions:
		if s.id == "" {
			return "privacy.exclude emptied"
		}
		return "privacy.exclude covers " + s.id + " too"
	}
	return "?"
}

func oneLine(content string) string {
	return strings.ReplaceAll(strings.TrimSuffix(content, "\n"), "\n", " ")
}

// history makes random steps and keeps what the logs hold after each.
type history struct {
	rng       *rand.Rand
	logs      map[string]*historyLog // by path under the projects directory
	lines     int                    // lines written: each is unique, so two logs share a head only as copies
	malformed int
}

type historyLog struct {
	content string // kept when the log is deleted or moved away: it may be written back
	there   bool
	// deleted is set while the name is that of a deleted log: its record
	// stays with it (a log moved away takes its record along).
	deleted bool
}

var (
	historySessions = []string{"s1", "s2", "s3", "s4", "s5"}
	historyChildren = []string{"c1", "c2"}
	historyKinds    = []string{"user", "llm", "call", "result", "turn_end"}
	// historyPaths are the names the logs may have: a few, so that the
	// steps meet on them.
	historyPaths = func() []string {
		var out []string
		for _, dir := range []string{"-w-app", "-w-other"} {
			for _, id := range append(append([]string{}, historySessions...), historyChildren...) {
				out = append(out, dir+"/"+id+".jsonl")
			}
		}
		for _, id := range historySessions {
			for _, lane := range []string{"x", "y"} {
				out = append(out, "-w-app/"+id+"/subagents/agent-"+lane+".jsonl")
			}
		}
		return out
	}()
)

func newHistory(seed uint64) *history {
	h := &history{rng: rand.New(rand.NewPCG(seed, 0x5eed)), logs: map[string]*historyLog{}}
	for _, p := range historyPaths {
		h.logs[p] = &historyLog{}
	}
	return h
}

// firstLogs is what both homes hold when their daemons start.
func (h *history) firstLogs() []step {
	var out []step
	add := func(path, session, parent string, n int) {
		s := step{kind: createLog, path: path, content: h.linesOf(session, parent, n)}
		h.logs[path].content, h.logs[path].there = s.content, true
		out = append(out, s)
	}
	add("-w-app/s1.jsonl", "s1", "", 2)
	add("-w-app/s2.jsonl", "s2", "", 1)
	add("-w-app/s3.jsonl", "s3", "", 2)
	add("-w-app/s3/subagents/agent-x.jsonl", "s3", "", 1)
	add("-w-app/s4.jsonl", "s4", "", 1)
	return out
}

// linesOf is n new lines of a session, the first naming its parent.
func (h *history) linesOf(session, parent string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		h.lines++
		kind := historyKinds[h.rng.IntN(len(historyKinds))]
		cwd := ""
		if *randomHistoryExclude {
			cwd = fmt.Sprintf(`,"cwd":%q`, historyCWD(session))
		}
		if i == 0 && parent != "" {
			fmt.Fprintf(&b, `{"s":%q,"p":%q,"k":%q,"u":%d%s}`+"\n", session, parent, kind, h.lines, cwd)
		} else {
			fmt.Fprintf(&b, `{"s":%q,"k":%q,"u":%d%s}`+"\n", session, kind, h.lines, cwd)
		}
	}
	return b.String()
}

// routeOf is the session and parent a log's first line names.
func routeOf(content string) (session, parent string) {
	first, _, _ := strings.Cut(content, "\n")
	var l fakeLine
	json.Unmarshal([]byte(first), &l)
	return l.S, l.P
}

// paths returns, in a fixed order, the log paths for which keep holds.
func (h *history) paths(keep func(*historyLog) bool) []string {
	var out []string
	for _, p := range historyPaths {
		if keep(h.logs[p]) {
			out = append(out, p)
		}
	}
	return out
}

func (h *history) pick(from []string) (string, bool) {
	if len(from) == 0 {
		return "", false
	}
	return from[h.rng.IntN(len(from))], true
}

func (h *history) one(of []string) string { return of[h.rng.IntN(len(of))] }

func there(l *historyLog) bool { return l.there }

// next makes the next step and notes what it changes.
func (h *history) next() step {
	for {
		if s, ok := h.try(h.rng.IntN(100)); ok {
			if s.kind <= moveLog {
				h.note(s)
			}
			if s.during != nil {
				h.note(*s.during)
			}
			return s
		}
	}
}

func (h *history) try(w int) (step, bool) {
	switch {
	case w < 20: // lines appended to a log
		p, ok := h.pick(h.paths(there))
		if !ok {
			return step{}, false
		}
		session, _ := routeOf(h.logs[p].content)
		if session == "" { // truncated to nothing: its next first line routes it
			session = h.one(historySessions)
		}
		return step{kind: appendLines, path: p, content: h.linesOf(session, "", 1+h.rng.IntN(3))}, true
	case w < 28: // a subagent log started or grown
		id := h.one(historySessions)
		p := "-w-app/" + id + "/subagents/agent-" + h.one([]string{"x", "y"}) + ".jsonl"
		if l := h.logs[p]; l.there {
			session, _ := routeOf(l.content)
			if session == "" {
				session = id
			}
			return step{kind: appendLines, path: p, content: h.linesOf(session, "", 1+h.rng.IntN(2))}, true
		}
		return step{kind: createLog, path: p, content: h.linesOf(id, "", 1+h.rng.IntN(2))}, true
	case w < 31: // a child session started or grown: it and its parent stay in memory from then on
		id := h.one(historyChildren)
		p := "-w-app/" + id + ".jsonl"
		if h.logs[p].there {
			return step{kind: appendLines, path: p, content: h.linesOf(id, "", 1+h.rng.IntN(2))}, true
		}
		return step{kind: createLog, path: p, content: h.linesOf(id, h.one(historySessions), 1+h.rng.IntN(2))}, true
	case w < 38: // a session's log started
		id := h.one(historySessions)
		p := "-w-app/" + id + ".jsonl"
		if h.logs[p].there {
			return step{}, false
		}
		return step{kind: createLog, path: p, content: h.linesOf(id, "", 1+h.rng.IntN(2))}, true
	case w < 46: // a log deleted: its record stays, its events too
		p, ok := h.pick(h.paths(there))
		return step{kind: deleteLog, path: p}, ok
	case w < 54: // a deleted log written back, with as many lines or more
		p, ok := h.pick(h.paths(func(l *historyLog) bool { return !l.there && l.content != "" }))
		if !ok {
			return step{}, false
		}
		content := h.logs[p].content
		if n := h.rng.IntN(3); n > 0 {
			session, _ := routeOf(content)
			content += h.linesOf(session, "", n)
		}
		return step{kind: createLog, path: p, content: content}, true
	case w < 59: // rewritten in place, longer, with a new first line
		p, ok := h.pick(h.paths(there))
		if !ok {
			return step{}, false
		}
		session, parent := h.rewrittenRoute(h.logs[p].content)
		content := h.linesOf(session, parent, 1)
		for len(content) <= len(h.logs[p].content) {
			content += h.linesOf(session, "", 1)
		}
		return step{kind: overwriteLog, path: p, content: content}, true
	case w < 63: // truncated to fewer whole lines, perhaps none
		p, ok := h.pick(h.paths(func(l *historyLog) bool { return l.there && l.content != "" }))
		if !ok {
			return step{}, false
		}
		lines := strings.SplitAfter(strings.TrimSuffix(h.logs[p].content, "\n"), "\n")
		keep := h.rng.IntN(len(lines))
		return step{kind: truncateLog, path: p, size: int64(len(strings.Join(lines[:keep], "")))}, true
	case w < 69: // another file under the name: the lines it had and more, or new ones
		p, ok := h.pick(h.paths(there))
		if !ok {
			return step{}, false
		}
		old := h.logs[p].content
		if session, _ := routeOf(old); session != "" && h.rng.IntN(2) == 0 {
			return step{kind: replaceLog, path: p, content: old + h.linesOf(session, "", 1+h.rng.IntN(2))}, true
		}
		session, parent := h.rewrittenRoute(old)
		return step{kind: replaceLog, path: p, content: h.linesOf(session, parent, 1+h.rng.IntN(3))}, true
	case w < 78: // moved: onto the name of a deleted log (of its own session most of all), a free name, or another log
		if to, ok := h.pick(h.paths(func(l *historyLog) bool { return l.deleted })); ok && h.rng.IntN(2) == 0 {
			session, _ := routeOf(h.logs[to].content)
			sameSession := func(l *historyLog) bool { s, _ := routeOf(l.content); return l.there && s == session }
			if from, ok := h.pick(h.paths(sameSession)); ok {
				return step{kind: moveLog, path: from, to: to}, true
			}
		}
		from, ok := h.pick(h.paths(there))
		if !ok {
			return step{}, false
		}
		var to string
		for _, onto := range [](func(*historyLog) bool){func(l *historyLog) bool { return l.deleted }, func(l *historyLog) bool { return !l.there }, there} {
			if h.rng.IntN(2) == 0 {
				continue
			}
			if to, ok = h.pick(h.paths(func(l *historyLog) bool { return onto(l) && l != h.logs[from] })); ok {
				break
			}
		}
		return step{kind: moveLog, path: from, to: to}, to != ""
	case w < 80: // a line that cannot be read: its session stays in memory from then on
		p, ok := h.pick(h.paths(func(l *historyLog) bool { return l.there && l.content != "" }))
		if !ok || h.malformed == 2 {
			return step{}, false
		}
		h.malformed++
		return step{kind: appendLines, path: p, content: "not a line\n"}, true
	case w < 87 || w < 89 && !*randomHistoryExclude: // a flush of one session, by native id, key or prefix, or of none
		ids := append(append([]string{"claude/s2", "s", "c", "zz"}, historySessions...), historyChildren...)
		return step{kind: flushOne, id: h.one(ids)}, true
	case w < 89: // privacy.exclude covers one more session (a child too), or, now and then, none
		if h.rng.IntN(4) == 0 {
			return step{kind: excludeSessions}, true
		}
		return step{kind: excludeSessions, id: h.one(append(slices.Clone(historySessions), historyChildren...))}, true
	case w < 93:
		return step{kind: flushAll}, true
	case w < 97:
		return step{kind: scanAll}, true
	default: // both daemons stopped and started again on their data
		s := step{kind: restartDaemons}
		// Half the time with a change to the logs (not a bad line) made
		// before the watcher's first look: what a session retired as it was
		// loaded must take up (quiet.go, leaveOutQuiet).
		for h.rng.IntN(2) == 0 && s.during == nil {
			if c, ok := h.try(h.rng.IntN(78)); ok {
				s.during = &c
			}
		}
		return s, true
	}
}

// rewrittenRoute is the session a log's new content names: mostly the one
// it had (and its parent), now and then another session's.
func (h *history) rewrittenRoute(content string) (session, parent string) {
	session, parent = routeOf(content)
	if session == "" || h.rng.IntN(4) == 0 {
		return h.one(historySessions), ""
	}
	return session, parent
}

// note records what a change to the logs leaves on disk.
func (h *history) note(s step) {
	l := h.logs[s.path]
	l.deleted = s.kind == deleteLog
	switch s.kind {
	case appendLines:
		l.content += s.content
	case createLog, replaceLog:
		l.content, l.there = s.content, true
	case deleteLog:
		l.there = false
	case truncateLog:
		l.content = l.content[:s.size]
	case overwriteLog:
		l.content = s.content
	case moveLog:
		to := h.logs[s.to]
		to.content, to.there, to.deleted = l.content, true, false
		l.there = false // its last content stays, to be written back
	}
}
