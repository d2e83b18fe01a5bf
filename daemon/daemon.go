package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/internal/words"
	"github.com/agentmap/agentmap/sink/postgres"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/state/mapstore"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

// Daemon follows the agents' logs and keeps a map per session.
type Daemon struct {
	opt   Options
	log   *slog.Logger
	db    *state.DB
	store *mapstore.Store

	agents map[string]agents.Agent
	roots  []watchers.Root
	// watcher is the file watcher of the running follow loop, read by
	// Status from other goroutines (its Problem).
	watcher atomic.Pointer[watchers.Watcher]

	// Owned by the goroutine in Run.
	srcs     map[uint64]*state.Source
	byPath   map[string]*state.Source
	sessions map[string]*state.Session
	parsers  map[uint64]watchers.Parser
	batchBuf []event.Event // the batch buffer of the tailer's reads (lineReader)
	ignored  map[string]watchers.FileStat
	// aliases are the ignored paths that are second names of followed
	// logs (otherName): looked at again once the first name is gone.
	aliases  map[string]bool
	unrouted map[string]bool     // logs reported as not recognised
	retry    map[string]*backoff // session key → next write attempt
	// checkMapBytes makes a flush read an up-to-date map's file back and
	// write it again unless it holds the bytes built (onDisk); mapWrites
	// counts the map files written, for a rewrite to tell.
	checkMapBytes bool
	mapWrites     uint64
	polls         map[string]time.Time
	nextID        uint64
	idx           indexes

	group       []queued
	groupEvents int
	flushed     []*state.Session // flush records not yet committed
	// tails are the events of logs' unfinished last lines that maps took
	// from the logs (partial), not yet recorded in the state; tailsKept
	// what is recorded of each source, so that an unchanged tail is not
	// written again at every flush.
	tails     map[uint64]state.Tail
	tailsKept map[uint64]tailMark
	touched   int  // state pages touched since the last release (releaseMapped)
	held      held // events kept from their commit until their map is written (held.go)

	progress struct{ done, total int64 }

	excluded       map[string]watchers.FileID // logs kept out by privacy.exclude
	sizes          map[string]int64           // the paths the watcher reports as there, with the size it last saw (for bytes behind)
	unfinished     unfinishedTails            // what status last found beyond cursors that stop short (see behind)
	reconf         chan Live
	flushReq       chan flushRequest
	rewrite        *rewriteJob // flush --all --rewrite under way
	scanReq        chan chan ScanResult
	started        time.Time
	lastFlush      time.Time
	catchUp        catchUp
	lastErr        *errTrap
	snap           snapshot
	configErr      configTrap
	publishOwed    bool           // a status count put off (publish)
	published      statusMark     // what the last count read (publish)
	marks          uint64         // sessions marked as about to change (mark)
	filesSeen      uint64         // file changes taken in (ingest)
	swept          sweepMark      // what the last sweep saw (ingest)
	sweptUnsure    bool           // it left a source it could not settle
	aheadNext      *parsed        // the visited log as a parse worker read it (parse.go)
	visited        visitedLog     // the visited log as adopt opened it (tail.go)
	readAhead      int            // logs whose read-ahead result was used
	clock          watchers.Clock // opt.Clock, for readers outside the loop
	sink           *postgres.Sender
	repair         *StateRepair               // damage found in the state database
	faults         commitFaults               // sources whose commit failed (faults.go)
	summed         map[uint64]bool            // sources whose checksum was checked since start
	reroute        map[uint64]bool            // sources moved to a name of another session
	displaced      map[string]bool            // names a log moved onto took from another (movedOnto)
	unforgotten    map[string]state.Forgotten // sessions privacy.exclude covers whose records could not be forgotten yet
	unforgottenAt  time.Time                  // when they are tried again (retryUnforgotten)
	keptOutBefore  []string                   // logs privacy.exclude kept out before a reload changed it (readKeptOut)
	excludeApplied int                        // times privacy.exclude was applied to what is kept
	vacated        map[string]bool            // sessions whose events a reset or a rename took away
	unreadable     map[string]*unreadableLog  // logs tried again on a schedule (unreadable.go)
	badDBs         map[string]*unreadableDB   // databases tried again on a schedule (sqlitefaults.go)
	unlisted       map[string]unlistedDir     // directories the walks could not list (unlisted.go)
	// unrecorded holds, after a repair, the maps in the store that no
	// session record may name any more, by session key (recover.go).
	unrecorded map[string][]string
	// retired holds what a one-shot catch-up keeps of the sessions it
	// wrote and let go of (retire.go, retiredset.go).
	retired  retiredSet
	restored int // retired sessions taken up again
	// gatheredAhead counts the flush chunks gathered while another was in
	// flight, stoppedAhead those of them stopped at unreadable events.
	gatheredAhead, stoppedAhead int
	mapsPeak                    int // the most sources held since the maps were last rebuilt (compactMaps)
	// keptInMemory notes, with their generation, the sessions a following
	// daemon may not let go of until they change (retireIdleOf).
	keptInMemory map[string]uint64
	holdRetire   bool // a command is taking every session up: none is let go of meanwhile
	// asked is set while the loop answers a command's flush or scan: a
	// write that fails then is no attempt of the retry schedule, and
	// leaves its back-off as it is (fail, commitFailed).
	asked         bool
	restoreFailed int // and those whose records could not be read back
	retiredOnLoad int // sessions retired as they were loaded, quiet (quiet.go)
	// quietLogs are, in a one-shot catch-up, the logs of the sessions
	// retired on load, which its walk leaves out (quiet.go).
	quietLogs *quietTable
	// closeScratch closes the file of a load in pieces (loadpieces.go),
	// which serves the walk after it too.
	closeScratch func()
	loadPieces   int // how many pieces the load was made in (0: one, in memory)
}

type backoff struct {
	at    time.Time
	delay time.Duration
}

// New prepares a daemon; Run opens the state and starts following.
func New(opt Options) *Daemon {
	opt.fill()
	d := &Daemon{
		opt: opt, log: opt.Logger, roots: opt.Roots,
		store:        &mapstore.Store{Root: MapsDir(opt.DataDir), Within: true},
		agents:       map[string]agents.Agent{},
		srcs:         map[uint64]*state.Source{},
		byPath:       map[string]*state.Source{},
		sessions:     map[string]*state.Session{},
		parsers:      map[uint64]watchers.Parser{},
		ignored:      map[string]watchers.FileStat{},
		aliases:      map[string]bool{},
		unrouted:     map[string]bool{},
		retry:        map[string]*backoff{},
		polls:        map[string]time.Time{},
		nextID:       1,
		idx:          newIndexes(),
		held:         newHeld(),
		excluded:     map[string]watchers.FileID{},
		sizes:        map[string]int64{},
		keptInMemory: map[string]uint64{},
		summed:       map[uint64]bool{},
		reroute:      map[uint64]bool{},
		displaced:    map[string]bool{},
		unforgotten:  map[string]state.Forgotten{},
		vacated:      map[string]bool{},
		unreadable:   map[string]*unreadableLog{},
		badDBs:       map[string]*unreadableDB{},
		unlisted:     map[string]unlistedDir{},
		reconf:       make(chan Live, 1),
		flushReq:     make(chan flushRequest),
		scanReq:      make(chan chan ScanResult),
	}
	d.lastErr = &errTrap{}
	d.clock = opt.Clock
	d.log = slog.New(trapHandler{Handler: d.log.Handler(), trap: d.lastErr})
	d.agents = registry(opt.Agents)
	return d
}

// Run follows the logs until ctx is done (or, with Once, until everything
// present is read and every map written). Only an unusable state database
// is fatal.
func (d *Daemon) Run(ctx context.Context) error {
	if d.opt.DataDir == "" {
		return errors.New("no data directory")
	}
	if err := d.prepareDataDir(); err != nil {
		return err
	}
	unlock, err := lockDataDir(d.opt.DataDir)
	if err != nil {
		return err
	}
	defer unlock()
	// Opening checks every record and loading decodes them: garbage by
	// the record, around a live heap that grows with the records kept.
	stopPacing := paceGC(loadHeadroom)
	db, err := state.Open(StatePath(d.opt.DataDir), d.log)
	if err != nil {
		stopPacing()
		return err
	}
	d.snap.mu.Lock() // Status reads it from the control server's goroutines
	d.db = db
	d.snap.mu.Unlock()
	defer db.Close()
	if d.opt.Once {
		// The sessions a scan lets go of are spilled from its load on.
		defer d.spillRetired()()
		defer func() {
			if d.closeScratch != nil {
				d.closeScratch()
			}
		}()
	}
	err = d.load()
	stopPacing()
	if err != nil {
		return fmt.Errorf("load state %s: %w", db.Path(), err)
	}
	d.noteRepair(db.Repaired())
	if d.repair == nil {
		d.repair = earlierRepair(db, d.opt.Clock.Now())
	}
	d.removeOrphans()
	d.excludeChanged()
	d.log.Info("started", "component", "daemon", "path", db.Path(), "sources", len(d.srcs),
		"sessions", d.sessionCount(), "quiet", d.retiredOnLoad, "pieces", max(d.loadPieces, 1), "roots", len(d.roots))
	d.noteRereads() // every such log is held: none is quiet (quietSource)
	d.noteNewStore()
	d.identityInEffect()
	d.started = d.opt.Clock.Now()
	defer d.startSink(ctx)()
	if d.opt.Once {
		octx, stop := stopOnFailure(ctx, db)
		err := d.once(octx)
		stop()
		if cause := db.Unusable(); cause != nil {
			return d.stopUnusable(cause)
		}
		d.drainSink(ctx)
		return err
	}
	d.publish()
	parent := ctx
	ctx, stopWatch := watchStateFile(ctx, db, stateCheckEvery)
	defer stopWatch()
	if d.opt.Control {
		stop, err := d.serveControl(ctx)
		if err != nil {
			// The daemon is useful without it: commands then say so.
			d.log.Error("cannot serve the control socket", "component", "control", "err", err)
		} else {
			defer stop()
		}
	}
	defer d.startExports(ctx)()
	err = d.follow(ctx)
	if cause := context.Cause(ctx); err == nil && parent.Err() == nil && cause != nil && cause != context.Canceled {
		if errors.Is(cause, state.ErrUnusable) {
			return d.stopUnusable(cause)
		}
		d.log.Error("stopping: the state database is not the file this daemon opened", "component", "daemon", "err", cause)
		return fmt.Errorf("%w; stopped, so that the next start opens the database at that path (a new one is rebuilt from the logs)", cause)
	}
	return err
}

// stopUnusable is the error a daemon or a scan stops with once its state
// database became unusable (damaged under it): the next start's open
// checks the file and moves a damaged one aside, and a service is started
// again by its manager (it stops on a failure).
func (d *Daemon) stopUnusable(cause error) error {
	d.log.Error("stopping: the state database was damaged while in use", "component", "daemon", "err", cause)
	return fmt.Errorf("%w; stopped, so that the next start checks it (a damaged database is moved aside and every log read again)", cause)
}

func (d *Daemon) load() error {
	var q *quietLoad
	now := ms(d.opt.Clock.Now())
	if retireOnLoad && (d.opt.Once || d.letsGo()) {
		q = newQuietLoad(d.roots, d.agents)
		q.follow, q.now, q.cutoff = !d.opt.Once, now, now-d.opt.RetireAfter.Milliseconds()
	}
	shared := newSharedStrings()
	// Only the records kept share their strings: those of a quiet session
	// let go of as it is read would fill the table for nothing (5 MB of a
	// second scan's heap at 100,000 sessions).
	keep := func(s *state.Source) {
		shared.source(s)
		d.keepSource(s)
	}
	session := func(s *state.Session) error {
		// status says when a map was last written, by this run or one before.
		if s.Flush != nil {
			if at := time.UnixMilli(s.Flush.AtMs); at.After(d.lastFlush) {
				d.lastFlush = at
			}
		}
		if q != nil && d.retireQuiet(q, s) {
			return nil
		}
		shared.session(s)
		s.ActivityMs = min(s.ActivityMs, now) // recorded from a future file time
		d.sessions[s.Key] = s
		d.indexChild(s)
		return nil
	}
	// The load reserves the sessions it lets go of and places their
	// sources in memory; a scan spills them once they are placed.
	d.retired.holdSpill = true
	defer func() {
		d.retired.holdSpill = false
		if d.retired.spill != nil && len(d.retired.byKey) >= retiredSpillAt {
			d.retired.spillNow()
		}
	}()
	if q != nil && !q.follow {
		if pieced, err := d.loadInPieces(q, keep, session); pieced || err != nil {
			d.markDirty()
			return err
		}
	}
	passes := state.Passes{Sources: func(s *state.Source) error {
		if s.ID >= d.nextID {
			d.nextID = s.ID + 1
		}
		if q == nil || !q.park(s) {
			keep(s)
		}
		return nil
	}, Sessions: session}
	if q != nil {
		passes.SessionKeys = q.sessionKey
		// The quiet sources: those of sessions retired are placed, those
		// of sessions that stay (another of their logs changed, or they
		// have a child) are kept as any other.
		passes.SourcesAgain = func(id uint64, record func() (*state.Source, error)) error {
			q.groups = nil // the sessions are read: the retired set knows them now
			if d.srcs[id] != nil {
				return nil
			}
			s, err := record()
			if err != nil {
				return err
			}
			if !d.place(q, s) {
				keep(s)
				if h, held := d.retired.pathHolder(s.Path); q.follow && held {
					q.recheck = append(q.recheck, h) // see place
				}
			}
			return nil
		}
	}
	if err := d.db.LoadPasses(passes); err != nil {
		return err
	}
	if q != nil {
		d.quietLogs = q.table()
		for _, h := range q.recheck {
			if ids, ok := d.retired.idsOf(h); ok {
				d.restoreRetired(h, ids)
			}
		}
	}
	d.markDirty()
	return nil
}

// keepSource takes a loaded source record into the loop. Of two records
// of one path (a file gone, another moved onto its name), the newer one
// (the higher id) is the path's, whatever the order they are kept in: the
// quiet logs of a session that stays are kept after the others.
func (d *Daemon) keepSource(s *state.Source) {
	d.srcs[s.ID] = s
	if takesPathFrom(s, d.byPath[s.Path]) {
		d.byPath[s.Path] = s
	}
	d.index(s)
}

// takesPathFrom reports whether source s, read back from the state
// database, answers for its path rather than o, the record that holds it
// so far (nil: none). A log present beats the record of one deleted from
// that name (a log moved onto a deleted log's name has the older record
// when both were its session's); between two alike, the newer.
func takesPathFrom(s, o *state.Source) bool {
	if o == nil || o.Missing != s.Missing {
		return o == nil || o.Missing
	}
	return o.ID < s.ID
}

// once catches up on every log present and writes every map that changed.
// Everything is flushed at the end, quiet or not: nothing more will be
// read, and a later run re-flushes a session that grows.
func (d *Daemon) once(ctx context.Context) error {
	// The walk is paced as GOGC's default has it: each piece of logs with
	// bytes to read is paced as a catch-up (ingestAsWalked), and what the
	// walks allocate between (some 2 KB a log) is garbage at once; with
	// the catch-up's headroom, a second scan that finds nothing to read
	// let it fill 128 MB.
	d.ingestAsWalked(ctx)
	stopPacing := paceGC(catchUpHeadroom) // the final flush: see gcpace.go
	defer func() { stopPacing() }()
	d.waitForLockedDBs(ctx)
	d.giveUpDBs()
	if err := d.retryOnce(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return nil
	}
	var failed []string
	for attempt := 0; ; attempt++ {
		failed = failed[:0]
		var dirty []string
		for _, key := range d.sessionKeys() {
			if s := d.sessions[key]; s.Dirty() || d.mapMissing(s) {
				dirty = append(dirty, key)
			}
		}
		for key := range d.flushMany(ctx, dirty) {
			failed = append(failed, key)
		}
		d.recordFlushes()
		if ctx.Err() != nil {
			return nil
		}
		if len(failed) == 0 || attempt == 3 || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-d.opt.Clock.After(time.Duration(1<<attempt) * time.Second):
		}
	}
	// Maps written by an earlier build or with other options, whose
	// sessions did not change: written again before the scan says done,
	// one at a time (rewrite.go), with the least headroom: the sessions
	// are taken up and let go of one by one, and little is live.
	stopPacing()
	stopPacing = paceGC(catchUpMinHeadroom)
	if res, ran := d.rewriteAllOnce(ctx); ran {
		if ctx.Err() != nil {
			return nil
		}
		failed = append(failed, res.Failed...)
	}
	if d.opt.Progress != nil {
		// The last word counts sessions as status and list do.
		d.opt.Progress(d.progress.done, d.progress.total, d.countSessions())
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s could not be written (see the log)", words.Counted(len(failed), "map"))
	}
	if d.restoreFailed > 0 {
		return fmt.Errorf("the records of %s written earlier in this scan could not be read back from the state database (see the log); their logs are read again at the next run", words.Counted(d.restoreFailed, "session"))
	}
	// One line, as the command prints it after its name.
	var errs []string
	for _, err := range []error{d.unreadableError(), d.unreadableDBError(), d.unlistedError()} {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// follow is the long-running loop: it owns all state; the watcher feeds it
// over a channel.
func (d *Daemon) follow(ctx context.Context) error {
	var (
		w      *watchers.Watcher
		cancel context.CancelFunc
		wg     sync.WaitGroup
	)
	startWatcher := func() {
		w = watchers.NewWatcher(d.roots, watchers.WatchOptions{
			Debounce: d.opt.Debounce, Rescan: d.opt.Rescan, MaxWatches: d.opt.MaxWatches,
			Clock: d.opt.Clock, Logger: d.log,
		})
		d.watcher.Store(w)
		var wctx context.Context
		wctx, cancel = context.WithCancel(ctx)
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(wctx) }()
	}
	if afterLoad != nil {
		afterLoad()
	}
	startWatcher()
	defer func() { cancel(); wg.Wait() }()
	first := true
	// Once the first catch-up is read and the maps then due are written,
	// the collector is paced for the daemon's long life and what the
	// catch-up grew into is given back (gcpace.go).
	release, unsettle := false, func() {}
	defer func() { unsettle() }()
	for {
		now := d.opt.Clock.Now()
		var wake <-chan time.Time
		if next, ok := d.nextDue(now); ok {
			wake = d.opt.Clock.After(next.Sub(now))
		}
		select {
		case <-ctx.Done():
			d.log.Info("stopping", "component", "daemon")
			d.rewriteSome(ctx) // answers a rewrite under way
			return nil
		case u := <-w.Updates():
			// The directories it could not list, taken out whole before
			// anything splits the update: a full walk's set replaces the
			// last one.
			u.Files = d.noteUnlisted(u.Files, u.Full)
			if first && u.Full {
				first = false
				u.Files = d.leaveOutQuiet(u.Files)
				// The sizes are the watcher's word that a log is there, which
				// the sweep ending this scan trusts: those of the sessions
				// taken up before it (read from the disk then) are not.
				clear(d.sizes)
				d.startCatchUp(u.Files)
				d.catchUpInPieces(ctx, u)
				d.catchUp.finish(d.opt.Clock.Now(), d.progress.done, d.progress.total)
				release = true
				d.checkMapIdentity()
			} else {
				d.ingest(ctx, u)
			}
		case l := <-d.reconf:
			if d.reconfigure(l) {
				// Other roots: the logs no longer under one are let go
				// of now, so that a copy of them under the new roots
				// counts once from its first reading (a sweep would come
				// only at the next full rescan); then a new watcher,
				// whose first full scan picks up what the new roots hold.
				d.letGoUnfollowed()
				cancel()
				wg.Wait()
				startWatcher()
			}
			d.readKeptOut(ctx)
			if !d.catchUp.finished.IsZero() {
				d.checkMapIdentity() // new map options: every map again
			}
		case r := <-d.flushReq:
			if r.rewrite {
				d.startRewrite(r)
			} else {
				d.asked = true
				r.reply <- d.flushNow(ctx, r)
				d.asked = false
			}
		case reply := <-d.scanReq:
			d.asked = true
			reply <- d.scanNow(ctx)
			d.asked = false
		case <-wake:
		}
		d.pollRetries(ctx)
		d.retryCommits(ctx)
		d.retryUnreadable(ctx)
		d.retryUnforgotten()
		d.flushDue(ctx, d.opt.Clock.Now())
		d.rewriteSome(ctx)
		d.publish()
		if release && ctx.Err() == nil { // not on the way out
			release, unsettle = false, settleGC()
			releaseMemory()
			d.releaseMapped(releaseEvery) // and the database's pages the catch-up touched last
		}
	}
}

func (d *Daemon) sessionKeys() []string {
	keys := make([]string, 0, len(d.sessions))
	for k := range d.sessions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sessionKey is the state key of a session: agent/native id.
// sessionKey is the key of a session: its agent and native id, the id as
// its map has it (event.ID: one that could be a log's text is a digest),
// so that no text from a log names a state record or a log line.
func sessionKey(agent, native string) string { return agent + "/" + event.ID(native) }

func nativeOf(key string) string {
	_, n, _ := strings.Cut(key, "/")
	return n
}

func (d *Daemon) session(key, agent string) *state.Session {
	s := d.sessions[key]
	if s == nil {
		var retired bool
		if s, retired = d.restore(key); s == nil {
			s = &state.Session{Key: key, Agent: agent, NativeID: nativeOf(key)}
			d.sessions[key] = s
			if !retired { // its events are stored already: never built from held ones
				d.sessionCreated(key)
			}
		}
	}
	d.mark(key) // whoever asks for it is about to change it
	return s
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
