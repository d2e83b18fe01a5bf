package daemon

import (
	"context"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// Status is what `agentmap status` shows of a running daemon. Without
// one, status reads the state alone: what only a running daemon has (its
// pid, start and uptime, its catch-up) is left out of the JSON, as of the
// text, rather than given as zeros and year 1.
type Status struct {
	PID       int           `json:"pid,omitempty"`
	Started   time.Time     `json:"started,omitzero"`
	Uptime    time.Duration `json:"uptimeNs,omitempty"`
	DataDir   string        `json:"dataDir"`
	Agents    []AgentStatus `json:"agents"`
	LastFlush time.Time     `json:"lastFlush,omitzero"`
	LastError *LoggedError  `json:"lastError,omitempty"`
	// CatchUp is left out before the first scan has begun, too.
	CatchUp CatchUp `json:"catchUp,omitzero"`
	// Excluded counts the logs privacy.exclude keeps out now: those it
	// kept out since the start, and those of sessions it forgot, less the
	// ones deleted since or let in again by a reload.
	Excluded int `json:"excluded"`
	// Unrecognised counts the logs found that no map is made of because
	// they could not be routed (not recognised as their agent's, or
	// naming no session by their lines or their file name): each is said
	// in the log when found, and passed over until it changes.
	Unrecognised int `json:"unrecognisedLogs,omitempty"`
	// Uncommitted counts the logs whose lines wait to be read again
	// because their commit failed; RetryAt is the next attempt (faults.go).
	Uncommitted int       `json:"uncommittedLogs,omitempty"`
	RetryAt     time.Time `json:"retryAt,omitzero"`
	// FlushRetries counts the sessions whose map write failed and waits
	// for another attempt.
	FlushRetries int `json:"flushRetries,omitempty"`
	// FlushRetryAt is the next of those attempts.
	FlushRetryAt time.Time `json:"flushRetryAt,omitzero"`
	// Unreadable counts the logs that could not be read when found and
	// are tried again on a schedule (unreadable.go).
	Unreadable *UnreadableLogs `json:"unreadableLogs,omitempty"`
	// UnreadableDBs counts the SQLite stores that could not be read and
	// are tried again on a schedule (sqlitefaults.go).
	UnreadableDBs *UnreadableLogs `json:"unreadableDatabases,omitempty"`
	// Unlisted counts the directories under the roots the walks could
	// not list, whose logs are not read until they can be (unlisted.go).
	Unlisted *UnlistedDirs `json:"unlistedDirs,omitempty"`
	// LongLines is set when logs end in a line still being written that
	// is longer than the cap (see LongLines).
	LongLines *LongLines `json:"unfinishedLongLines,omitempty"`
	// Reread counts the logs on disk an earlier build's parser read,
	// which are read again from their start (reread.go).
	Reread int `json:"rereadLogs,omitempty"`
	// Rewrite is a rewrite of every map under way (identity.go).
	Rewrite *RewriteStatus `json:"rewrite,omitempty"`
	// State is set when the state database was found damaged (recover.go).
	State *StateRepair `json:"stateRepair,omitempty"`
	// Export is the scheduled exports' last outcome (export.go).
	Export *ExportStatus `json:"export,omitempty"`
	// Sink is the team database's queue and last outcome (sink.go).
	Sink *SinkStatus `json:"sink,omitempty"`
	// ConfigError is the last rejected reload of the config file, while
	// no later reload succeeded (problems.go).
	ConfigError *ConfigReloadError `json:"configReloadError,omitempty"`
	// Notifications says why file notifications do not cover every
	// directory followed (a limit reached: new logs there wait for the
	// next rescan), empty while they do.
	Notifications string `json:"notifications,omitempty"`
	// SkippedSessions are the sessions with skipped lines, worst first.
	SkippedSessions []SkippedSession `json:"skippedSessions,omitempty"`
}

// AgentStatus is one agent's share of the work.
type AgentStatus struct {
	Agent string `json:"agent"`
	// Files followed (present on disk), sessions with changes not yet in
	// a map (live) and sessions whose map is up to date (flushed).
	Files   int `json:"files"`
	Live    int `json:"live"`
	Flushed int `json:"flushed"`
	// Behind is the bytes the logs hold beyond the committed cursors.
	Behind int64 `json:"bytesBehind"`
	// Skipped counts lines that could not be used, oversized ones
	// included.
	Skipped int64 `json:"skippedLines"`
}

// LoggedError is the last error the daemon logged: its message and the
// component, never content (log lines carry none).
type LoggedError struct {
	At        time.Time `json:"at"`
	Message   string    `json:"message"`
	Component string    `json:"component,omitempty"`
	// Cause is the error the record was logged with (its "err"), as the
	// log line has it: what failed underneath, a full disk, say.
	Cause string `json:"cause,omitempty"`
}

// CatchUp is the progress of the first full scan after start: on a first
// run it reads the whole existing history.
type CatchUp struct {
	Running bool      `json:"running"`
	Done    int64     `json:"bytesDone"`
	Total   int64     `json:"bytesTotal"`
	Started time.Time `json:"started,omitzero"`
	// Elapsed is the time from Started to when Done was counted, on the
	// daemon's monotonic clock: with Done, the rate of the catch-up, which
	// a jump of the wall clock does not skew.
	Elapsed  time.Duration `json:"elapsedNs,omitempty"`
	Finished time.Time     `json:"finished,omitzero"`
}

type catchUp struct {
	running  bool
	started  time.Time // when it was sized: its rate so far tells the time left
	finished time.Time
	// done and total are the progress when it finished: the reads after
	// it count on in progress, which status no longer shows as its own.
	done, total int64
}

func (c *catchUp) finish(now time.Time, done, total int64) {
	c.running, c.finished, c.done, c.total = false, now, done, total
}

// startCatchUp sizes the first full scan, as once does.
func (d *Daemon) startCatchUp(files []watchers.FileStat) {
	d.progress.done, d.progress.total = 0, 0
	for _, f := range files {
		d.progress.total += d.unread(f)
	}
	d.catchUp.running, d.catchUp.started = true, d.opt.Clock.Now()
	d.publishNow()
}

// snapshot is the last published Status; the control server reads it
// while the loop goes on.
type snapshot struct {
	mu     sync.Mutex
	status Status
	at     time.Time
}

// publishEvery bounds how often a daemon following many logs counts its
// records for the status (publishMany and more): the count costs a walk of
// every record, which must not be paid at every wake-up of a busy loop.
// A count put off is owed, and nextDue wakes the loop to pay it.
const (
	publishEvery = time.Second
	publishMany  = 5000
)

// publish records the loop's view for the control server, at once for a
// small daemon, at most every publishEvery for a large one.
func (d *Daemon) publish() {
	if !d.publishOwed && d.statusInputs() == d.published {
		return // nothing the count reads has changed: the snapshot holds
	}
	if len(d.srcs) >= publishMany && d.opt.Clock.Now().Sub(d.snap.at) < publishEvery {
		d.publishOwed = true
		return
	}
	d.publishNow()
}

// statusMark is what the published status is a function of, in a form
// cheap to compare: the records change only through the loop, which writes
// each change to the state database (writes), marks the session it is
// about to change (marks) or takes in files (filesSeen); the rest is held
// beside the records. Equal marks mean a count would give the snapshot
// already published, so an idle rescan of many sessions costs no walk of
// them (the uptime is brought up to date when read).
type statusMark struct {
	writes, marks, filesSeen uint64
	sources, sessions        int
	agents, excluded         int
	unrecognised             int
	lastFlush                time.Time
	catchUp                  catchUp
	progress                 struct{ done, total int64 }
	uncommitted, retries     int
	retryAt                  time.Time
	flushRetryAt             time.Time
	unreadable, unlisted     int
	badDBs                   int
	dbRetryAt                time.Time
	repair                   *StateRepair
}

func (d *Daemon) statusInputs() statusMark {
	m := statusMark{
		marks: d.marks, filesSeen: d.filesSeen,
		sources: len(d.srcs), sessions: len(d.sessions), agents: len(d.opt.Agents), excluded: d.keptOutCount(),
		unrecognised: d.unrecognisedCount(),
		lastFlush:    d.lastFlush, catchUp: d.catchUp, progress: d.progress,
		uncommitted: len(d.faults.waiting), retries: len(d.retry), retryAt: d.faults.at, flushRetryAt: d.flushRetryDue(),
		unreadable: len(d.unreadable), unlisted: len(d.unlisted), repair: d.repair,
	}
	if d.db != nil {
		m.writes = d.db.Writes()
	}
	if len(d.unreadable) > 0 {
		m.retryAt, _ = d.unreadableDue() // its schedule is shown too
	}
	m.badDBs = len(d.badDBs)
	m.dbRetryAt, _ = d.dbRetryDue()
	return m
}

// publishNow counts the records for the control server. It runs in the
// loop, which owns the records.
func (d *Daemon) publishNow() {
	d.publishOwed = false
	d.published = d.statusInputs()
	now := d.opt.Clock.Now()
	per := map[string]*AgentStatus{}
	get := func(agent string) *AgentStatus {
		a := per[agent]
		if a == nil {
			a = &AgentStatus{Agent: agent}
			per[agent] = a
		}
		return a
	}
	for _, ag := range d.opt.Agents {
		get(ag.Name)
	}
	tails := unfinishedTails{}
	defer func() { d.unfinished = tails }()
	for _, s := range d.srcs {
		a := get(s.Agent)
		a.Skipped += s.Skipped + s.Oversized
		if s.Missing {
			continue
		}
		if s.Form != formConversation {
			a.Files++
		}
		if s.Form == watchers.FormLines {
			if size, ok := d.sizes[s.Path]; ok && size > s.Offset {
				a.Behind += tails.behind(d.unfinished, s, size, d.opt.MaxLine)
			}
		}
	}
	for _, r := range d.retired.agents { // retired sessions: written, their logs read to the end
		a := get(r.name)
		a.Files += r.logs
		a.Flushed += r.sessions
	}
	waiting, own := d.waitingSessions(), d.waitingOwn()
	for _, s := range d.sessions {
		if _, waits := own[s.Key]; !waits && !counted(s, d.hasSources) {
			continue
		}
		if s.Dirty() || waiting[s.Key] {
			get(s.Agent).Live++
		} else {
			get(s.Agent).Flushed++
		}
	}
	// A new session whose first lines wait on a failed commit (a full
	// disk) has no committed source yet (counted above) or no record at
	// all: live all the same, not gone from the table until the disk has
	// room.
	for key, agent := range own {
		if _, held := d.sessions[key]; held {
			continue
		}
		if _, _, quiet := d.retired.lookup(key); quiet {
			continue
		}
		get(agent).Live++
	}
	st := Status{
		Started: d.started, Uptime: now.Sub(d.started), DataDir: d.opt.DataDir,
		LastFlush: d.lastFlush, Excluded: d.keptOutCount(), Unrecognised: d.unrecognisedCount(),
		LongLines: tails.longLines(d.opt.MaxLine),
		Reread:    d.rereadCount(), Rewrite: d.rewriteStatus(),
		CatchUp: CatchUp{Running: d.catchUp.running, Done: d.progress.done, Total: d.progress.total,
			Started: d.catchUp.started, Finished: d.catchUp.finished},
	}
	if d.catchUp.running && !d.catchUp.started.IsZero() {
		st.CatchUp.Elapsed = now.Sub(d.catchUp.started)
	}
	if !d.catchUp.finished.IsZero() {
		st.CatchUp.Done, st.CatchUp.Total = d.catchUp.done, d.catchUp.total
	}
	for _, a := range per {
		st.Agents = append(st.Agents, *a)
	}
	sort.Slice(st.Agents, func(i, j int) bool { return st.Agents[i].Agent < st.Agents[j].Agent })
	st.LastError = d.lastErr.get()
	srcs := make([]*state.Source, 0, len(d.srcs))
	for _, s := range d.srcs {
		srcs = append(srcs, s)
	}
	st.SkippedSessions = skippedSessions(srcs)
	if n := len(d.faults.waiting); n > 0 {
		st.Uncommitted, st.RetryAt = n, d.faults.at
	}
	st.FlushRetries = len(d.retry)
	st.FlushRetryAt = d.flushRetryDue()
	d.unreadableStatus(&st)
	d.unreadableDBStatus(&st)
	d.unlistedStatus(&st)
	if d.repair != nil {
		r := *d.repair
		st.State = &r
	}
	d.snap.mu.Lock()
	d.snap.status, d.snap.at = st, now
	d.snap.mu.Unlock()
}

// counted says whether a session is one that status, scan and list count
// alike: one with a map or with changes for one; not a parent known only
// through its child, nor a flush that wrote no map. sourced says whether a
// session key has a source.
func counted(s *state.Session, sourced func(key string) bool) bool {
	// sourced last: it is the one test that costs a look-up.
	if s.Parent == "" && s.Flush == nil && !sourced(s.Key) {
		return false // known only as a parent so far
	}
	return s.Dirty() || (s.Flush != nil && s.Flush.Path != "")
}

// countSessions is how many sessions count (see counted).
func (d *Daemon) countSessions() int {
	n := d.retired.counted
	for _, s := range d.sessions {
		if counted(s, d.hasSources) {
			n++
		}
	}
	return n
}

// Status returns the last published status, its uptime brought up to now.
func (d *Daemon) Status() Status {
	d.snap.mu.Lock()
	st, db := d.snap.status, d.db
	d.snap.mu.Unlock()
	st.LastError = d.lastErr.get()
	st.ConfigError = d.lastConfigError()
	st.Export = exportStatus(db)
	st.Sink = sinkStatus(db)
	if w := d.watcher.Load(); w != nil {
		st.Notifications = w.Problem()
	}
	if st.Sink != nil && d.opt.Sink == nil {
		st.Sink.Off = true
	}
	if !st.Started.IsZero() {
		st.Uptime = d.clock.Now().Sub(st.Started)
	}
	return st
}

// errTrap keeps the last error-level log record.
type errTrap struct {
	mu   sync.Mutex
	last *LoggedError
}

func (t *errTrap) get() *LoggedError {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last == nil {
		return nil
	}
	e := *t.last
	return &e
}

// trapHandler passes records on and remembers the last error.
//
// The attributes given with Logger.With are kept as they are and handed to
// the handler below only when a record is logged: the daemon makes a
// logger for every log it reads and every map it writes (its agent, path
// and session), and most of them never log a line, while the handler
// below formats a logger's attributes when it is made (in a scan of
// 100,000 sessions, 3% of the samples of the loop that routes, commits
// and writes the maps).
type trapHandler struct {
	slog.Handler
	trap      *errTrap
	component string      // given with Logger.With
	attrs     []slog.Attr // given with Logger.With, not handed down yet
}

func (h trapHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || h.Handler.Enabled(ctx, l)
}

func (h trapHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		e := &LoggedError{At: r.Time, Message: r.Message, Component: h.component}
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "component":
				e.Component = a.Value.String()
			case "err":
				e.Cause = a.Value.String()
			}
			return true
		})
		h.trap.mu.Lock()
		h.trap.last = e
		h.trap.mu.Unlock()
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.withAttrs().Handle(ctx, r)
}

// withAttrs is the handler below with the attributes given so far: a copy
// of them, as a handler may keep or change the slice it is given, and this
// one is shared by every goroutine logging through the logger.
func (h trapHandler) withAttrs() slog.Handler {
	if len(h.attrs) == 0 {
		return h.Handler
	}
	return h.Handler.WithAttrs(slices.Clone(h.attrs))
}

func (h trapHandler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	for _, a := range as {
		if a.Key == "component" {
			h.component = a.Value.String()
		}
	}
	// A copy when there are attributes already: two loggers made from
	// this one must not share the room after them.
	h.attrs = append(h.attrs[:len(h.attrs):len(h.attrs)], as...)
	return h
}

func (h trapHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return trapHandler{Handler: h.withAttrs().WithGroup(name), trap: h.trap, component: h.component}
}

// unfinishedTails remembers, for each log of lines whose cursor stops
// short of its end, whether what lies beyond is a last line still being
// written, so that a status published again does not read it again.
type unfinishedTails map[uint64]unfinishedTail

type unfinishedTail struct {
	offset, size int64
	unfinished   bool
	// long is a last line still being written that is longer than the
	// cap on a line: it is skipped (and counted) once it ends, and its
	// bytes stay behind until then.
	long bool
}

// LongLines counts the logs that end in a line still being written and
// longer than the cap (watch.max_line, run's --max-line): such a line is
// skipped and counted once it ends, and until then its bytes are behind
// with no cursor able to move over them, which status says rather than
// let BEHIND look like a daemon that does not read.
type LongLines struct {
	Logs  int   `json:"logs"`
	Bytes int64 `json:"bytes"`
	Cap   int64 `json:"maxLine"`
}

// longLines sums what u found of lines longer than the cap (nil: none).
func (u unfinishedTails) longLines(maxLine int) *LongLines {
	var l LongLines
	for _, t := range u {
		if t.long {
			l.Logs++
			l.Bytes += t.size - t.offset
		}
	}
	if l.Logs == 0 {
		return nil
	}
	if maxLine <= 0 {
		maxLine = watchers.DefaultMaxLine
	}
	l.Cap = int64(maxLine)
	return &l
}

// behind returns the bytes of a log the daemon has not read: from the
// cursor to size, less a last line without a newline that it has read at
// this size. Such a line is in the session's map (the tail hands it to
// the parser at each flush) but no cursor moves over it until it ends, so
// a finished session whose agent wrote no last newline would look behind
// for good.
// What was looked at before is taken from last; u keeps what this count
// looked at, so that the logs gone or caught up since drop out.
func (u unfinishedTails) behind(last unfinishedTails, s *state.Source, size int64, maxLine int) int64 {
	if size != s.Size { // grown or cut since the last read: all of it is to read
		return size - s.Offset
	}
	t, ok := last[s.ID]
	if !ok || t.offset != s.Offset || t.size != size {
		t = unfinishedTail{offset: s.Offset, size: size, unfinished: unfinishedAt(s.Path, s.Offset, size, maxLine)}
		// Past the cap, a last line still being written: no newline
		// from the cursor to the end. The record's size does not say it
		// (a catch-up commits the whole file's size with each chunk, the
		// cursor at the chunk's end), so the bytes are looked at: a log
		// read part way has a newline in its first block.
		capped := int64(maxLine)
		if capped <= 0 {
			capped = watchers.DefaultMaxLine
		}
		t.long = !t.unfinished && size-s.Offset > capped+1 && !newlineIn(s.Path, s.Offset, size)
	}
	u[s.ID] = t
	if t.unfinished {
		return 0
	}
	return size - s.Offset
}

// newlineIn reports whether path holds a newline from offset to size (a
// file it cannot open: true, nothing is claimed of it; see
// watchers.NewlineIn). Only a line longer than the cap is read to its end,
// once for each size it has (the caller keeps what it found).
func newlineIn(path string, offset, size int64) bool {
	f, err := watchers.OpenLog(path)
	if err != nil {
		return true
	}
	defer f.Close()
	return watchers.NewlineIn(f, offset, size)
}

// unfinishedAt opens path to look at its tail (see watchers.UnfinishedLine).
func unfinishedAt(path string, offset, size int64, maxLine int) bool {
	f, err := watchers.OpenLog(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return watchers.UnfinishedLine(f, offset, size, maxLine)
}

// unrecognisedCount is how many logs adopt could not route and passes
// over until they change (unrouted, and ignored still: a change read
// again, a reload or a deletion takes a log off).
func (d *Daemon) unrecognisedCount() int {
	n := 0
	for path := range d.unrouted {
		if _, ok := d.ignored[path]; ok {
			n++
		}
	}
	return n
}
