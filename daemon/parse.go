package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

// chunk is one batch of a log's lines as a commit records it: the events,
// the cursor after its last line, the parser's carry-state there, and the
// line counts.
type chunk struct {
	end            int64
	cursor         watchers.Cursor
	events         []event.Event
	encoded        []byte // events as the state database stores them, when a parse worker encoded them
	lines, skipped int64
	oversized      int
	carry          []byte
	last           bool // the batch that ends the read
}

// cutError is a batch that could not be cut: the cursor could not be
// advanced (a read error) or the parser's state not saved.
type cutError struct {
	offset int64
	state  bool
	err    error
}

func (e *cutError) Error() string { return fmt.Sprintf("at offset %d: %v", e.offset, e.err) }

// logCut logs a batch that could not be cut, as the tailer always has.
func logCut(log *slog.Logger, err error) {
	var c *cutError
	switch {
	case !errors.As(err, &c):
	case c.state:
		log.Error("cannot save parser state", "offset", c.offset, "err", c.err)
	default:
		log.Warn("cannot read log", "offset", c.offset, "err", c.err)
	}
}

// lineReader parses a log's complete lines from a cursor and cuts them
// into batches (batchEvents events or batchBytes bytes at most). The
// tailer and the parse workers read through it, so that a log read ahead
// gives exactly the batches the tailer would have cut.
type lineReader struct {
	f       *os.File
	id      watchers.FileID
	size    int64
	cur     watchers.Cursor // after the last batch cut
	p       watchers.Parser
	maxLine int
	log     *slog.Logger // for lines skipped (debug)

	// batch is what the parser appends the events of the batch being read
	// to: a buffer reused from batch to batch and, through spare, from log
	// to log. A batch is handed on as a copy of its own size, because it
	// outlives the read (it waits in a commit group, or among a parse
	// worker's chunks); grown from nil for each batch, the events were
	// allocated several times over as the slice doubled.
	batch          []event.Event
	lines, skipped int64
	after          watchers.Prefix // what the last run took of the bytes before its end
}

// newLineReader reads with buf (a spare of an earlier reader, or nil) as
// the buffer of its batches.
func newLineReader(f *os.File, id watchers.FileID, size int64, c watchers.Cursor, p watchers.Parser, maxLine int, log *slog.Logger, buf []event.Event) *lineReader {
	return &lineReader{f: f, id: id, size: size, cur: c, p: p, maxLine: maxLine, log: log, batch: buf[:0]}
}

// spare returns the reader's batch buffer for the next reader, emptied:
// the events it held are let go of.
func (r *lineReader) spare() []event.Event {
	clear(r.batch)
	return r.batch[:0]
}

// pending reports whether lines were read since the last batch.
func (r *lineReader) pending() bool { return len(r.batch) > 0 }

// cut ends a batch at end (after a run: its end).
func (r *lineReader) cut(end int64, oversized int) (chunk, error) {
	return r.cutAt(end, oversized, r.after)
}

// cutAt ends a batch at end, with what the read took of the bytes before
// it (the cursor reads what p lacks from the file).
func (r *lineReader) cutAt(end int64, oversized int, p watchers.Prefix) (chunk, error) {
	c, err := watchers.AdvanceFrom(r.f, r.id, r.size, r.cur, end, p)
	if err != nil {
		return chunk{}, &cutError{offset: end, err: err}
	}
	carry, err := r.p.State()
	if err != nil {
		return chunk{}, &cutError{offset: end, state: true, err: err}
	}
	var events []event.Event
	if len(r.batch) > 0 {
		events = make([]event.Event, len(r.batch))
		copy(events, r.batch)
		clear(r.batch) // nothing of the batch handed on stays reachable from the buffer
	}
	ch := chunk{end: end, cursor: c, events: events, lines: r.lines, skipped: r.skipped, oversized: oversized, carry: carry}
	r.cur, r.batch, r.lines, r.skipped = c, r.batch[:0], 0, 0
	return ch, nil
}

var errStopRead = errors.New("stop")

// run reads the lines from the cursor to the size, handing each full
// batch to emit; the lines after the last full batch stay pending (the
// caller decides on a last batch: needFinal). stopped reports that emit
// said stop.
func (r *lineReader) run(emit func(chunk) bool) (st watchers.TailStats, stopped bool, err error) {
	st, r.after, err = watchers.TailSummed(r.f, r.cur, r.size, r.maxLine, func(line []byte, end int64, prefix func() watchers.Prefix) error {
		r.lines++
		if !isBlank(line) {
			var perr error
			if r.batch, perr = safeLine(r.p, line, r.batch); perr != nil {
				r.skipped++
				r.log.Debug("line skipped", "offset", end, "err", perr)
			}
		}
		if len(r.batch) >= batchEvents || end-r.cur.Offset >= batchBytes {
			c, err := r.cutAt(end, 0, prefix())
			if err != nil {
				return err
			}
			if !emit(c) {
				return errStopRead
			}
		}
		return nil
	})
	if errors.Is(err, errStopRead) {
		return st, true, nil
	}
	return st, false, err
}

// needFinal says whether a read ends with one more batch: lines or bytes
// beyond the last one, a reset or oversized lines to record, a source
// with no head yet, or an unfinished last line that grew.
func needFinal(st watchers.TailStats, committed int64, reset bool, headLen int, pending, partialGrew bool) bool {
	return st.End != committed || reset || st.Oversized > 0 || headLen == 0 || pending || partialGrew
}

// Reading ahead. A catch-up reads thousands of logs, each parsed on its
// own with a parser of its own: parse workers (one per CPU) read the new
// logs of a batch of changes ahead of the loop, which takes each result
// when it comes to that log, in the order it always visits them. The loop
// alone still routes, applies and commits, one transaction per group, so
// nothing about what is committed, or when, changes: a result is used only
// when the loop finds the log as the worker did (a new source at offset
// 0, the same routing, identity, size and time) and is otherwise dropped
// and the log read as before. Workers touch no record of the loop.
const (
	aheadMaxBytes = 32 << 20 // larger logs are read by the loop, batch by batch
	// aheadBudget bounds the bytes of logs the workers hold read, or are
	// reading, ahead of the loop. A budget of bytes, not of logs: with a
	// few logs each, a worker that filled its share with small logs sat
	// idle while the loop waited for a large one, and both cores were
	// busy only 75-85% of a 50x corpus catch-up. And a bound on the logs
	// too: 64 MiB of small logs is tens of thousands of results held.
	aheadBudget  = 32 << 20
	aheadMaxLogs = 64 // per worker
)

// parsed is a log read ahead: its batches and what they were read from.
type parsed struct {
	path    string
	route   watchers.Source // the parser's routing
	id      watchers.FileID
	size    int64
	mod     time.Time
	first   []byte          // the first line, as routed
	parser  watchers.Parser // after the last line
	sidecar bool
	chunks  []chunk
	stats   watchers.TailStats
}

// aheadSlot is one log to read ahead: an index into the batch's files,
// which outlive the batch's read-ahead. A catch-up's first batch is every
// log there is, so a slot is kept small (a copy of the file's stat, a
// channel and a map entry each were 35 MB at 100,000 logs).
type aheadSlot struct {
	file    int32
	claimed bool // taken by the loop (a worker no longer starts it)
	started bool
	done    bool
	res     *parsed
}

// readAhead is the parse workers of one batch of changes.
type readAhead struct {
	files  []watchers.FileStat
	mu     sync.Mutex
	ready  sync.Cond // a slot is done, room freed, or closed
	slots  []aheadSlot
	next   int   // the next slot a worker starts
	taken  int   // the next slot the loop may take
	held   int64 // bytes of the logs started and not yet taken
	heldN  int   // and their number
	maxN   int
	closed bool
	wg     sync.WaitGroup
}

// startReadAhead starts parse workers over the new logs of files, or
// returns nil when there are too few to gain from them.
func (d *Daemon) startReadAhead(files []watchers.FileStat) *readAhead {
	workers := d.opt.ParseWorkers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers < 2 {
		return nil // one CPU: the loop is as fast alone
	}
	ra := &readAhead{files: files, maxN: workers * aheadMaxLogs}
	ra.ready.L = &ra.mu
	for i, f := range files {
		if f.Gone || f.Form != watchers.FormLines || f.Size <= 0 || f.Size > aheadMaxBytes {
			continue
		}
		if s := d.byPath[f.Path]; s != nil && !(s.Form == watchers.FormLines && d.toReread(s)) {
			continue // read from its cursor by the loop; a log to read again is read from its start
		}
		if _, ok := d.agents[f.Agent]; !ok || d.isExcluded(f) {
			continue
		}
		ra.slots = append(ra.slots, aheadSlot{file: int32(i)})
	}
	if len(ra.slots) < 2 {
		return nil
	}
	// Everything a worker uses is read now, in the loop: the agents and
	// options do not change while the batch is applied.
	read := aheadReader{agents: d.agents, exclude: d.opt.Exclude, once: d.opt.Once, maxLine: d.opt.MaxLine, log: d.log.With("component", "tail")}
	for range min(workers, len(ra.slots)) {
		ra.wg.Add(1)
		go func() {
			defer ra.wg.Done()
			ra.work(read)
		}()
	}
	return ra
}

func (ra *readAhead) work(read aheadReader) {
	var buf []event.Event // the batch buffer of this worker's reads
	ra.mu.Lock()
	defer ra.mu.Unlock()
	for {
		for ra.next < len(ra.slots) && ra.slots[ra.next].claimed {
			ra.next++
		}
		if ra.closed || ra.next == len(ra.slots) {
			return
		}
		sl := &ra.slots[ra.next]
		f := ra.files[sl.file]
		// Within the budget, or nothing held at all: a log larger than
		// what is left waits for the loop to take what is held.
		if ra.held > 0 && (ra.held+f.Size > aheadBudget || ra.heldN >= ra.maxN) {
			ra.ready.Wait()
			continue
		}
		ra.next++
		sl.started = true
		ra.held += f.Size
		ra.heldN++
		ra.mu.Unlock()
		res := read.parse(f, &buf)
		ra.mu.Lock()
		sl.res, sl.done = res, true
		ra.ready.Broadcast()
	}
}

// take returns the result for files[i], waiting for a worker that started
// it, or nil (not read ahead, not started yet: the loop reads it itself).
// The loop takes in the order of files.
func (ra *readAhead) take(i int) *parsed {
	if ra == nil {
		return nil
	}
	ra.mu.Lock()
	defer ra.mu.Unlock()
	for ra.taken < len(ra.slots) && int(ra.slots[ra.taken].file) < i {
		if sl := &ra.slots[ra.taken]; sl.started && !sl.claimed {
			sl.claimed = true
			ra.held -= ra.files[sl.file].Size // passed by: its room is free again
			ra.heldN--
			ra.ready.Broadcast()
		}
		ra.taken++
	}
	if ra.taken == len(ra.slots) || int(ra.slots[ra.taken].file) != i {
		return nil
	}
	sl := &ra.slots[ra.taken]
	ra.taken++
	sl.claimed = true
	if !sl.started {
		return nil
	}
	for !sl.done {
		ra.ready.Wait()
	}
	res := sl.res
	sl.res = nil
	ra.held -= ra.files[sl.file].Size
	ra.heldN--
	ra.ready.Broadcast() // a worker may be waiting for room
	return res
}

// close stops the workers and waits for them.
func (ra *readAhead) close() {
	if ra == nil {
		return
	}
	ra.mu.Lock()
	ra.closed = true
	ra.ready.Broadcast()
	ra.mu.Unlock()
	ra.wg.Wait()
}

// aheadReader is what a worker reads a log with.
type aheadReader struct {
	agents  map[string]agents.Agent
	exclude func(cwd string) bool
	once    bool
	maxLine int
	log     *slog.Logger
}

// parse reads a new log as the loop would for a new source: routed by its
// first line (adopt), a fresh parser (parser), every batch cut (tail). Any
// doubt returns nil, and the loop reads the log itself. buf is the batch
// buffer the worker's reads share.
func (a aheadReader) parse(fs watchers.FileStat, buf *[]event.Event) (res *parsed) {
	defer func() {
		if recover() != nil {
			res = nil // the loop's own read reports it
		}
	}()
	ag := a.agents[fs.Agent]
	if a.exclude != nil {
		// privacy.exclude is decided first, as adopt does: a log it keeps
		// out is never parsed, here either.
		cwd, short := agents.SniffCWD(fs.Path)
		if cwd == "" && short && fs.Agent == "claude" && !a.once || cwd != "" && a.exclude(cwd) {
			return nil
		}
	}
	// One open serves the first line and the read: a catch-up opens every
	// log there is.
	f, err := watchers.OpenLog(fs.Path)
	if err != nil {
		return nil
	}
	defer f.Close()
	first, complete, err := firstLineOf(f)
	if err == nil && !complete && a.once {
		first, err = agents.FirstLine(fs.Path)
		complete = err == nil
	}
	if err != nil || !complete {
		return nil
	}
	if ag.Name == "codex" && !ag.LooksLike(first) && agents.LooksLikeWholeJSON(first) {
		return nil // read whole
	}
	r, err := ag.Identify(fs.Path, first)
	if err != nil || r.Session == "" {
		return nil
	}
	src := &state.Source{Path: fs.Path, Agent: ag.Name}
	src.Session, src.Lane, src.ChildLane = sessionKey(ag.Name, r.Session), r.Lane, r.ChildLane
	if r.ParentSession != "" {
		src.ParentSession = sessionKey(ag.Name, r.ParentSession)
	}
	id, fi, err := watchers.IdentifyOpen(f)
	if err != nil || fi.Size() > aheadMaxBytes {
		return nil
	}
	res = &parsed{path: fs.Path, route: routing(src), id: id, size: fi.Size(), mod: fi.ModTime(), first: first}
	res.parser = ag.New(res.route)
	res.sidecar = sidecarAppeared(src)
	agents.AttachFile(res.parser, fs.Path)
	rd := newLineReader(f, id, res.size, watchers.Cursor{}, res.parser, a.maxLine, a.log.With("agent", ag.Name, "path", fs.Path), *buf)
	defer func() { *buf = rd.spare() }()
	var st watchers.TailStats
	st, _, err = rd.run(func(c chunk) bool {
		res.chunks = append(res.chunks, c.encode())
		return true
	})
	if err != nil {
		return nil
	}
	res.stats = st
	// The source as the loop's commits leave it: its head from the
	// cursor, its size once a batch was recorded.
	committed, size := rd.cur.Offset, int64(0)
	if len(res.chunks) > 0 {
		size = res.size
	}
	partialGrew := st.Partial > 0 && res.size != size
	if needFinal(st, committed, false, rd.cur.HeadLen, rd.pending(), partialGrew) {
		c, err := rd.cut(st.End, st.Oversized)
		if err != nil {
			return nil
		}
		c.last = true
		res.chunks = append(res.chunks, c.encode())
	}
	return res
}

// encode returns the chunk with its events encoded as the state database
// stores them: a worker does it, rather than the commit on the loop, which
// every log's batches pass through one by one.
func (c chunk) encode() chunk {
	if len(c.events) > 0 {
		c.encoded = state.EncodeEvents(c.events)
	}
	return c
}

// takeParsed returns the read-ahead result of the log the loop is
// visiting, when it was read from what the loop sees: a fresh source, or
// one just rebased to its start (no cursor, no parser), with the same
// routing, and the file with the same identity, size and time.
func (d *Daemon) takeParsed(s *state.Source, reset bool, id watchers.FileID, fi os.FileInfo) *parsed {
	res := d.aheadNext
	d.aheadNext = nil
	c := cursorOf(s)
	if c.ID == id {
		c.ID = watchers.FileID{} // a rebased source keeps its file's identity
	}
	if res == nil || res.path != s.Path || c != (watchers.Cursor{}) || d.parsers[s.ID] != nil || res.route != routing(s) ||
		res.id != id || res.size != fi.Size() || !res.mod.Equal(fi.ModTime()) {
		return nil
	}
	if reset && len(res.chunks) == 0 {
		// A source rebased to its start (a log read again: reread.go)
		// drops its events in its first commit: none would come.
		return nil
	}
	d.readAhead++
	return res
}
