package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/state/mapstore"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
	"github.com/agentmap/agentmap/watchers/gemini"
)

// dueAt says when a session's map is to be written: at once after an
// explicit end (a deleted file, an archive move), after TurnEndQuiet when
// the agent ended its turn (it waits for its user), after Idle otherwise;
// never before a pending retry. ok is false when the map is up to date.
func dueAt(s *state.Session, idle, turnEndQuiet time.Duration, retry *backoff) (at time.Time, ok bool) {
	if !s.Dirty() {
		return time.Time{}, false
	}
	last := time.UnixMilli(s.ActivityMs)
	switch {
	case s.EndedMs != 0:
		at = time.UnixMilli(s.EndedMs)
	case s.TurnEnd:
		at = last.Add(turnEndQuiet)
	default:
		at = last.Add(idle)
	}
	if retry != nil && retry.at.After(at) {
		at = retry.at
	}
	return at, true
}

// nextDue is the earliest time something is due: a flush or a poll.
func (d *Daemon) nextDue(now time.Time) (time.Time, bool) {
	var next time.Time
	found := false
	consider := func(t time.Time) {
		if !found || t.Before(next) {
			next, found = t, true
		}
	}
	for key := range d.idx.pending {
		s := d.sessions[key]
		if s == nil {
			delete(d.idx.pending, key)
			continue
		}
		if at, ok := dueAt(s, d.opt.Idle, d.opt.TurnEndQuiet, d.retry[s.Key]); ok {
			consider(at)
		} else {
			delete(d.idx.pending, key)
		}
	}
	if at, ok := d.dbRetryDue(); ok {
		consider(at)
	}
	if d.publishOwed {
		consider(d.snap.at.Add(publishEvery))
	}
	if d.rewrite != nil {
		consider(now) // its next slice
	}
	if at, ok := d.retryDue(); ok {
		consider(at)
	}
	if at, ok := d.unreadableDue(); ok {
		consider(at)
	}
	if len(d.unforgotten) > 0 {
		consider(d.unforgottenAt)
	}
	if found && next.Before(now) {
		next = now
	}
	return next, found
}

// flushDue writes every map that is due, until ctx is done.
func (d *Daemon) flushDue(ctx context.Context, now time.Time) {
	d.commitGroup()
	defer d.recordFlushes()
	var due []string
	for _, key := range d.pendingKeys() {
		s := d.sessions[key]
		if at, ok := dueAt(s, d.opt.Idle, d.opt.TurnEndQuiet, d.retry[key]); ok && !at.After(now) {
			due = append(due, key)
		}
	}
	d.flushMany(ctx, due)
}

// recordFlushes commits the flush records gathered since the last call.
func (d *Daemon) recordFlushes() {
	d.recordTails()
	if len(d.flushed) == 0 {
		return
	}
	var written []string
	if err := d.db.PutSessions(d.flushed...); err != nil {
		d.log.Error("cannot record flushes; the maps will be written again", "component", "flush", "err", err)
		for _, s := range d.flushed {
			s.Flush = nil
			d.fail(s.Key)
		}
	} else if d.letsGo() {
		for _, s := range d.flushed {
			written = append(written, s.Key)
		}
	}
	d.notifySink()
	d.flushed = d.flushed[:0]
	d.retireWrittenIdle(written)
}

// flushRetryDue is the next attempt to write a map that failed (zero when
// none waits), which status shows beside the count.
func (d *Daemon) flushRetryDue() time.Time {
	var next time.Time
	for _, r := range d.retry {
		if next.IsZero() || r.at.Before(next) {
			next = r.at
		}
	}
	return next
}

// fail schedules another attempt with exponential back-off (1 s doubling,
// capped at maxBackoff). A failure while a command's request is answered
// keeps a schedule already there as it is: the user asking again while
// the disk is full must not put off the write once it has room.
func (d *Daemon) fail(key string) {
	r := d.retry[key]
	if r != nil && d.asked {
		d.mark(key)
		return
	}
	if r == nil {
		r = &backoff{delay: time.Second}
		d.retry[key] = r
	} else {
		r.delay = min(r.delay*2, maxBackoff)
	}
	r.at = d.opt.Clock.Now().Add(r.delay)
	d.mark(key)
}

// flush builds a session's map from every event it has (its own files, its
// lanes, its Codex children, the partial last lines that parse) and writes
// it atomically, then records the flush.
func (d *Daemon) flush(key string) error {
	return d.flushMany(context.Background(), []string{key})[key]
}

// A flush of many sessions goes in chunks of at most flushChunk sessions
// or flushChunkEvents events (so that its memory stays bounded): the loop
// gathers each chunk's events, a pool as wide as the machine builds the
// maps, one batch write shares the syncs of the chunk's files, and the
// loop records the outcome in session order.
//
// While the loop writes a chunk's maps and records them, the pool builds
// the next chunk's, gathered just before: a catch-up of many small
// sessions is bound by the loop (in a scan of 100,000 of them, before the
// chunks overlapped, the loop waited 3.4 s for the pool to build, and the
// pool then had nothing to build while the loop wrote). The next chunk is
// gathered ahead only while this one holds at most half of
// flushChunkEvents, and within what is left of it, so that the events in
// flight stay under the same bound (but for the last session a chunk
// takes, as ever) and chunks of larger sessions are gathered, built and
// written one by one, as before, in the same number of batches. A chunk
// gathered is always written, even once ctx is done.
//
// Gathering the next chunk before this one is recorded changes no map and
// no record: each gathers, and each job records, its own sessions only,
// each job with the generation it gathered. The sessions the next chunk
// finds empty join the flushes to record ahead of this chunk's. A
// session's events that cannot be read stop a chunk gathered ahead: its
// repair (which may read logs again, forget sessions a new exclusion
// covers, or rewrite a map) waits until no chunk is in flight.
const (
	flushChunk       = 128
	flushChunkEvents = 50000
)

// flushAhead is a variable for the tests, which compare flushes that
// gather ahead with flushes that do not.
var flushAhead = true

// eventsReadFault is the tests': when set, the error it returns for a
// session and its sources is sessionEvents' (a damage found only when the
// events are read, as a disk failing under a running daemon makes).
var eventsReadFault func(key string, srcs []*state.Source) error

// flushMany flushes the given sessions, in order; it returns the error of
// each session whose map could not be written (a retry is scheduled).
func (d *Daemon) flushMany(ctx context.Context, keys []string) map[string]error {
	failed := map[string]error{}
	d.commitGroup()
	var next *flushBatch
	for ctx.Err() == nil && (len(keys) > 0 || next != nil) {
		cur := next
		if cur == nil {
			cur, keys = d.gatherChunk(keys, flushChunkEvents, false, failed)
		}
		next = nil
		if flushAhead && !cur.stopped && ctx.Err() == nil && len(keys) > 0 && cur.events <= flushChunkEvents/2 {
			next, keys = d.gatherChunk(keys, flushChunkEvents-cur.events, true, failed)
			d.gatheredAhead++
			if next.stopped {
				d.stoppedAhead++
			}
		}
		d.finishChunk(cur, failed)
	}
	if next != nil {
		d.finishChunk(next, failed)
	}
	return failed
}

// flushJob is one session's map on its way to the store.
type flushJob struct {
	key     string
	s       *state.Session
	gen     uint64
	events  []event.Event
	built   Built
	err     error
	rel     string
	hash    string
	written bool // a write was attempted (the map changed)
}

// flushBatch is one chunk of a flush: its jobs, their events, and the
// pool building its maps (built is closed once every job is built).
// stopped says a chunk gathered ahead stopped at a session whose events
// could not be read, which is then at the head of the keys left.
type flushBatch struct {
	jobs    []*flushJob
	events  int
	built   chan struct{}
	stopped bool
}

// gatherChunk takes the sessions at the head of keys that fit in one chunk
// of budget events (the last session it takes may pass it), gathers their
// events, starts the pool on their maps, and returns the chunk and the
// rest. A chunk gathered ahead (while another is in flight) stops at a
// session whose events cannot be read, leaving it to the next chunk.
func (d *Daemon) gatherChunk(keys []string, budget int, ahead bool, failed map[string]error) (*flushBatch, []string) {
	b := &flushBatch{built: make(chan struct{})}
	for len(keys) > 0 && len(b.jobs) < flushChunk && b.events < budget {
		key := keys[0]
		s := d.sessions[key]
		evs, err := d.sessionEvents(key, true)
		if err != nil && ahead {
			b.stopped = true
			break
		}
		keys = keys[1:]
		if err != nil && d.repairSession(err) {
			evs, err = d.sessionEvents(key, true)
		}
		d.letGo(key, d.sourcesOf(key))
		if err != nil {
			d.log.Error("cannot read the session's events", "component", "flush", "agent", s.Agent, "session", key, "err", err)
			d.fail(key)
			failed[key] = err
			continue
		}
		if len(evs) == 0 {
			d.dropVacated(s)
			s.Flush = &state.Flush{Gen: s.Gen, AtMs: ms(d.opt.Clock.Now()), Options: d.opt.MapIdentity}
			d.flushed = append(d.flushed, s)
			continue
		}
		b.jobs = append(b.jobs, &flushJob{key: key, s: s, gen: s.Gen, events: evs})
		b.events += len(evs)
	}
	jobs := b.jobs
	mapper := d.opt.Mapper
	// The map's hash is taken by the pool too: the loop alone writes and
	// records, and every sum taken there would wait on it.
	go func() {
		defer close(b.built)
		parallel(len(jobs), func(i int) {
			j := jobs[i]
			if j.built, j.err = safeMap(mapper, j.events); j.err == nil {
				sum := sha256.Sum256(j.built.Gzip)
				j.hash = hex.EncodeToString(sum[:])
			}
		})
	}()
	return b, keys
}

// finishChunk waits for a chunk's maps, writes those that changed in one
// batch, and records the outcome of each job in session order.
func (d *Daemon) finishChunk(b *flushBatch, failed map[string]error) {
	<-b.built
	jobs, events := b.jobs, b.events
	var items []mapstore.Item
	var writes []*flushJob
	for _, j := range jobs {
		if j.err != nil {
			continue
		}
		built, s := j.built, j.s
		id := built.NativeID
		if id == "" {
			id = s.NativeID
		}
		start := built.Start
		if start.IsZero() {
			start = time.UnixMilli(s.ActivityMs)
		}
		j.rel = mapstore.RelPath(s.Agent, id, start)
		if f := s.Flush; f != nil && f.SHA256 == j.hash && f.Path == j.rel {
			if path := filepath.Join(d.store.Root, j.rel); d.onDisk(path, built.Gzip) {
				if d.unrecorded[s.Key] != nil {
					d.removeMaps(d.log.With("component", "flush", "session", s.Key), s, j.rel)
				}
				continue // unchanged
			}
		}
		j.written = true
		items = append(items, mapstore.Item{Rel: j.rel, Data: built.Gzip, Replaces: s.Flush != nil && s.Flush.Path == j.rel})
		writes = append(writes, j)
	}
	for i, err := range d.store.WriteMany(items) {
		writes[i].err = err
		if err == nil {
			d.mapWrites++
		}
	}

	for _, j := range jobs {
		s, key := j.s, j.key
		log := d.log.With("component", "flush", "agent", s.Agent, "session", key)
		if j.err != nil && !j.written {
			// The same events give the same refusal: wait for new ones
			// rather than retrying (a lane whose parent log is absent, say).
			// A session with no events has no map, by design.
			if errors.Is(j.err, builder.ErrEmptySession) {
				log.Debug("session has no events yet: no map")
			} else {
				log.Warn("session not mappable until it changes", "err", j.err)
			}
			if !errors.Is(j.err, errBuilderPanic) {
				// A map exists exactly when the events make one, as with
				// `agentmap build`: the one written before goes (that of
				// a vacated session too).
				delete(d.vacated, s.Key)
				d.removeMaps(log, s, "")
			}
			s.Flush = &state.Flush{Gen: j.gen, AtMs: ms(d.opt.Clock.Now()), Options: d.opt.MapIdentity}
			// Settled, as a map written is: a retry left from a failed
			// attempt before (a full disk) would be counted in status,
			// and hold the session in memory, for as long as the daemon
			// runs. A failure to record this comes back through fail.
			delete(d.retry, key)
			d.flushed = append(d.flushed, s)
			continue
		}
		if j.err != nil {
			log.Error("cannot write the map; will retry", "path", j.rel, "err", j.err)
			d.fail(key)
			failed[key] = j.err
			continue
		}
		if j.written {
			d.removeMaps(log, s, j.rel)
		}
		delete(d.retry, key)
		d.lastFlush = d.opt.Clock.Now()
		s.Flush = &state.Flush{Path: j.rel, SHA256: j.hash, Gen: j.gen, Events: len(j.events), AtMs: ms(d.opt.Clock.Now()),
			Sum: j.built.Summary, Options: d.opt.MapIdentity, Size: int64(len(j.built.Gzip))}
		// Recorded with others in one transaction: a crash before it only
		// means the same bytes are written again.
		d.flushed = append(d.flushed, s)
		if len(d.flushed) >= groupBatches {
			d.recordFlushes()
		}
		for _, src := range d.sourcesOf(key) {
			delete(d.parsers, src.ID) // quiet now: free the memory
		}
		if j.written {
			// A rewrite of every map (an upgrade's: tens of thousands)
			// says it once, at its end (endRewrite): a line a map would
			// push the start and the errors out of a capped log file.
			level := slog.LevelInfo
			if d.rewrite != nil {
				level = slog.LevelDebug
			}
			log.Log(context.Background(), level, "map written", "path", j.rel, "events", len(j.events))
		}
	}
	d.releaseMapped(events + len(jobs)*recordWeight)
}

// The state database's pages that commits and flushes touch are let go of
// (state.DB.ReleaseMapped) once about releaseEvery events' worth of them
// were: a catch-up commits and reads back the records of every session
// once, and without it the process's resident memory would count all of
// those pages at the end, growing with the number of sessions though the
// heap does not. A record (a source's, a session's) counts recordWeight.
const (
	releaseEvery = 50000
	recordWeight = 10
)

func (d *Daemon) releaseMapped(touched int) {
	d.touched += touched
	if d.touched < releaseEvery {
		return
	}
	d.touched = 0
	if err := d.db.ReleaseMapped(); err != nil {
		d.log.Debug("cannot release the state database's mapped pages", "component", "state", "err", err)
	}
}

// removeMaps removes a session's previous maps (previousMaps) but the one
// at keep.
func (d *Daemon) removeMaps(log *slog.Logger, s *state.Session, keep string) {
	for _, rel := range d.previousMaps(s) {
		if rel == keep {
			continue
		}
		if err := d.store.Remove(rel); err != nil {
			log.Warn("cannot remove the previous map", "path", rel, "err", err)
		} else if keep == "" {
			log.Info("the session no longer makes a map; removed the previous one", "path", rel)
		}
	}
	delete(d.unrecorded, s.Key)
}

// dropVacated removes the map of a session whose events this daemon moved
// away (its log renamed to another session, or reset to nothing): the map
// would describe a session no log holds any more. Only such a session:
// a map with no events behind it for any other reason (a state database
// rebuilt after damage) may be the last copy of its session, and stays.
func (d *Daemon) dropVacated(s *state.Session) {
	if !d.vacated[s.Key] {
		return
	}
	delete(d.vacated, s.Key)
	f := s.Flush
	if f == nil || f.Path == "" {
		return
	}
	log := d.log.With("component", "flush", "agent", s.Agent, "session", s.Key, "path", f.Path)
	if err := d.store.Remove(f.Path); err != nil {
		log.Warn("cannot remove the map of a session whose events moved away", "err", err)
		return
	}
	log.Info("session has no events left; its map removed")
}

// parallel calls fn(0) … fn(n-1) on as many goroutines as the machine has
// cores, and returns when all are done.
func parallel(n int, fn func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// sessionEvents gathers everything a session's map is built from. Sources
// are taken in a fixed order (lane, file name, rotated copies oldest
// first): the builder is independent of how lanes interleave, and a lane's
// own order is its files'.
func (d *Daemon) sessionEvents(key string, withChildren bool) ([]event.Event, error) {
	srcs := d.sourcesOf(key)
	if eventsReadFault != nil {
		if err := eventsReadFault(key, srcs); err != nil {
			return nil, err
		}
	}
	sort.Slice(srcs, func(i, j int) bool {
		a, b := srcs[i], srcs[j]
		if a.Lane != b.Lane {
			return a.Lane < b.Lane
		}
		if c := watchers.RotationOrder(filepath.Base(a.Path), filepath.Base(b.Path)); c != 0 {
			return c < 0 // a rotated copy before the live log
		}
		return a.ID < b.ID
	})
	stored, held := d.heldEvents(key, srcs)
	if !held {
		stored = map[uint64][]event.Event{}
		if err := d.db.Events(key, func(src uint64, evs []event.Event) error {
			stored[src] = evs
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if len(srcs) == 0 {
		// Known only as the parent of a child rollout: no map of its own
		// until its own log shows up.
		return nil, nil
	}
	if gone := supersededCopies(srcs, stored, d.countsAsGone); len(gone) > 0 {
		kept := make([]*state.Source, 0, len(srcs)-len(gone))
		for _, s := range srcs {
			if gone[s.ID] {
				delete(stored, s.ID)
			} else {
				kept = append(kept, s)
			}
		}
		srcs = kept
	}
	// One copy, sized up front; a session of one log takes its events as
	// they are (held or just decoded: nothing else keeps or changes them),
	// clipped so that partial's append copies rather than writes into them.
	var out []event.Event
	if len(srcs) == 1 {
		evs := stored[srcs[0].ID]
		out = evs[:len(evs):len(evs)]
	} else {
		n := 0
		for _, s := range srcs {
			n += len(stored[s.ID])
		}
		out = make([]event.Event, 0, n)
	}
	for _, s := range srcs {
		if len(srcs) > 1 {
			out = append(out, stored[s.ID]...)
		}
		delete(stored, s.ID)
		if s.Form == watchers.FormLines {
			if s.Missing {
				out = d.keptTail(s, out)
			} else {
				out = d.partial(s, out)
			}
		}
	}
	if f, ok := d.unforgotten[key]; ok && f.OnlySources {
		// Logs privacy.exclude covers that the state could not forget
		// yet: their events are still stored, and are not this map's.
		for _, s := range f.Sources {
			delete(stored, s.ID)
		}
	}
	if len(stored) > 0 {
		de := &state.DamagedError{Session: key}
		for id := range stored {
			de.Sources = append(de.Sources, id)
		}
		return nil, de // events of no known source
	}
	if !withChildren {
		return out, nil
	}
	if len(out) > 0 {
		// A session whose lines name no id that passes the gate (a
		// sessionId that could be text) is the session its log was
		// routed to, by its file name: `agentmap build` maps it so.
		agent, native, _ := strings.Cut(key, "/")
		out = agents.EnsureSession(agent, native, out)
	}
	for _, ck := range d.childrenOf(key) {
		c := d.sessions[ck]
		evs, err := d.sessionEvents(ck, false)
		if err != nil {
			return nil, err
		}
		out = append(out, builder.AsLane(evs, c.ChildLane)...)
	}
	return out, nil
}

// partial appends the events of a source's last line when it has no
// newline yet but parses: a writer may never finish it. The cursor does not
// move over it; a parser restored from the committed state reads it.
func (d *Daemon) partial(s *state.Source, out []event.Event) []event.Event {
	// Nearly always the log ends where its cursor is: one stat says so
	// without the open, identification and close a map would pay otherwise.
	if fi, err := os.Stat(s.Path); err != nil || fi.Size() <= s.Offset {
		return out
	}
	f, err := watchers.OpenLog(s.Path)
	if err != nil {
		return out
	}
	defer f.Close()
	id, fi, err := watchers.IdentifyOpen(f)
	if err != nil || fi.Size() <= s.Offset || watchers.Verify(f, id, fi.Size(), cursorOf(s)) != nil {
		return out
	}
	line, ok := watchers.PartialLine(f, s.Offset, fi.Size(), d.opt.MaxLine)
	if !ok {
		return out
	}
	a, ok := d.agents[s.Agent]
	if !ok {
		return out
	}
	var p watchers.Parser
	if s.Offset == 0 {
		p = a.New(routing(s))
	} else {
		carry, err := d.db.Carry(s.ID)
		if err != nil {
			return out
		}
		if p, err = a.Restore(routing(s), carry); err != nil {
			return out
		}
	}
	agents.AttachFile(p, s.Path)
	evs, err := safeLine(p, line, nil)
	if err != nil {
		return out
	}
	d.noteTail(s, evs)
	return append(out, evs...)
}

// tailMark is what the state holds of a source's tail: where it starts and
// a hash of its stored bytes.
type tailMark struct {
	at  int64
	sum [32]byte
}

// noteTail keeps the events a map takes from a log's unfinished last line
// for the state (recordFlushes commits them), unless it holds them
// already: once the log is gone, a map written again has them from there
// (keptTail).
func (d *Daemon) noteTail(s *state.Source, evs []event.Event) {
	if len(evs) == 0 {
		return
	}
	enc := state.EncodeEvents(evs)
	mark := tailMark{at: s.Offset, sum: sha256.Sum256(enc)}
	if d.tailsKept[s.ID] == mark {
		return
	}
	if d.tails == nil {
		d.tails = map[uint64]state.Tail{}
	}
	d.tails[s.ID] = state.Tail{Source: s.ID, At: s.Offset, Encoded: enc}
}

// keptTail appends the events the state kept of a gone log's unfinished
// last line, when they start at its cursor (the lines read since, if any,
// replaced them).
func (d *Daemon) keptTail(s *state.Source, out []event.Event) []event.Event {
	var evs []event.Event
	var err error
	ok := false
	if t, noted := d.tails[s.ID]; noted && t.At == s.Offset { // noted, not yet recorded
		evs, err = t.Events()
		ok = err == nil
	} else {
		evs, ok, err = d.db.TailAt(s.ID, s.Offset)
	}
	if err != nil {
		d.log.Warn("cannot read the last line kept of a gone log; its map is written without it", "component", "flush", "agent", s.Agent, "err", err)
		return out
	}
	if !ok {
		return out
	}
	return append(out, evs...)
}

// recordTails commits the tails noted since the last call.
func (d *Daemon) recordTails() {
	if len(d.tails) == 0 {
		return
	}
	tails := make([]state.Tail, 0, len(d.tails))
	for _, t := range d.tails {
		tails = append(tails, t)
	}
	if err := d.db.PutTails(tails); err != nil {
		d.log.Error("cannot record the last lines of logs that have no newline yet; tried again at the next flush", "component", "flush", "err", err)
		return
	}
	if d.tailsKept == nil {
		d.tailsKept = map[uint64]tailMark{}
	}
	for _, t := range tails {
		d.tailsKept[t.Source] = tailMark{at: t.At, sum: sha256.Sum256(t.Encoded)}
	}
	clear(d.tails)
}

// supersededCopies returns the sources of a session whose lines another
// of its sources holds again: a gone log and a present one of the same
// lane that begin with the same bytes (the first KiB of a log names its
// session and its start), or two older Codex rollouts of one session, read
// whole. That is one log moved by a copy and a deletion (`mv` across file
// systems, a home copied to a new place, a sync tool): the copy is a new
// file, read from its start, and counting both would count every line
// twice, where `agentmap build` of the logs there counts it once. Of the two, the one
// that gave more is kept (read further, or more events from a log read
// whole; the present one on a tie): a shorter copy leaves what the gone
// log gave in the map; of gone ones alone (a log copied twice, the last
// copy not read that far yet), one is kept too. Present logs that share a
// head are all kept, as `agentmap build` of them would. gone says which
// logs count as gone (countsAsGone).
func supersededCopies(srcs []*state.Source, stored map[uint64][]event.Event, gone func(*state.Source) bool) map[uint64]bool {
	if len(srcs) < 2 {
		return nil // a copy needs another source (and gone, a look at the roots, is not paid)
	}
	var out map[uint64]bool
	drop := func(s *state.Source) {
		if out == nil {
			out = map[uint64]bool{}
		}
		out[s.ID] = true
	}
	gave := func(s *state.Source) int64 {
		if s.Form == watchers.FormWhole {
			return int64(len(stored[s.ID]))
		}
		return s.Offset
	}
	for _, m := range srcs {
		if twinned(m, srcs, stored) {
			drop(m)
			continue
		}
		if !copyable(m) || !gone(m) {
			continue
		}
		for _, p := range srcs {
			if gone(p) && p.ID <= m.ID || !copyOf(m, p) {
				continue // two gone ones are weighed once, from the first
			}
			// The present one wins a tie; of two gone ones, the first.
			if gave(p) > gave(m) || gave(p) == gave(m) && !gone(p) {
				drop(m)
			} else {
				drop(p)
			}
		}
	}
	return out
}

// twinned reports whether a source is a Gemini CLI chat of the older
// whole-document form (name.json) whose session has the JSONL copy a
// current client writes beside it when it resumes the chat (name.jsonl):
// the copy holds the whole conversation again, and is read instead of the
// document, as agentmap build reads it (gemini.ErrSuperseded). A daemon
// that read the document before the copy appeared keeps its events in the
// state, and leaves them out of the map once the copy has given as many
// events (read that far: a copy still being written, or read in part,
// leaves the document's in the map meanwhile).
func twinned(s *state.Source, srcs []*state.Source, stored map[uint64][]event.Event) bool {
	if s.Agent != gemini.Agent || s.Form != watchers.FormWhole || !strings.HasSuffix(s.Path, ".json") {
		return false
	}
	for _, p := range srcs {
		if p.Path == s.Path+"l" && p.Form == watchers.FormLines && !p.Missing && len(stored[p.ID]) >= len(stored[s.ID]) {
			return true
		}
	}
	return false
}

// copyable reports whether a source's log can be told in a copy of it: a
// log read line by line by its head; an older Codex rollout read whole is
// its session's only file. Other logs read whole are not: a Gemini CLI
// process writes a chat file of its own under one session id for each
// conversation it starts (after a /clear, say), and those are not copies.
func copyable(s *state.Source) bool {
	switch s.Form {
	case watchers.FormLines:
		return s.HeadLen > 0
	case watchers.FormWhole:
		return s.Agent == "codex"
	}
	return false
}

// copyOf reports whether the present source p holds the log of the gone
// source m again: the same lane and form, and the same head for a log read
// line by line (an older Codex rollout, read whole, is the whole session
// in one file: another of the same session and lane is a copy of it, as it
// was or as it went on).
func copyOf(m, p *state.Source) bool {
	if p == m || p.Lane != m.Lane || p.Form != m.Form || p.Agent != m.Agent {
		return false
	}
	return m.Form == watchers.FormWhole || sameHead(m, p)
}

// sameHead reports whether the present log p begins with the head the
// gone log m had: the same fingerprint when both heads are as long, else
// the fingerprint of p's first bytes as many as m's head (a log under a
// KiB had a shorter head when it was read).
func sameHead(m, p *state.Source) bool {
	switch {
	case p.HeadLen == m.HeadLen:
		return p.HeadHash == m.HeadHash
	case p.HeadLen < m.HeadLen:
		return false
	}
	f, err := watchers.OpenLog(p.Path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, m.HeadLen)
	if n, _ := f.ReadAt(b, 0); n != m.HeadLen {
		return false
	}
	return watchers.Fingerprint(b) == m.HeadHash
}

// countsAsGone reports whether a source counts as a log gone when its
// session's copies are weighed (supersededCopies): its file is gone, or
// it is under no root its agent is followed in now (the roots changed to
// a copy of the logs, the old ones kept), which a sweep marks gone in
// time but a flush before it must not count twice. An agent followed
// nowhere (turned off) keeps its logs as they are.
func (d *Daemon) countsAsGone(s *state.Source) bool {
	if s.Missing {
		return true
	}
	return s.Form != formConversation && !metByRoots(s, d.roots) &&
		slices.ContainsFunc(d.roots, func(r watchers.Root) bool { return r.Agent == s.Agent })
}

// copyOfGone reports whether a source just gone has its lines in another
// present source of its session (supersededCopies): its session's map
// must be made again, or it keeps them twice.
func (d *Daemon) copyOfGone(s *state.Source) bool {
	if !copyable(s) {
		return false
	}
	for _, p := range d.sourcesOf(s.Session) {
		if !p.Missing && copyOf(s, p) {
			return true
		}
	}
	return false
}

// onDisk reports whether the map file at path is there, and, when a flush
// was asked for by name or a rewrite of every map (checkMapBytes), holds
// the bytes just built: a map damaged on disk (a disk error, an edit) has
// the record of a map up to date, and only such an ask reads it back.
func (d *Daemon) onDisk(path string, built []byte) bool {
	if !d.checkMapBytes {
		// Its size tells a map cut short, emptied or written over,
		// without reading it.
		fi, err := os.Stat(path)
		return err == nil && fi.Size() == int64(len(built))
	}
	b, err := os.ReadFile(path)
	return err == nil && bytes.Equal(b, built)
}
