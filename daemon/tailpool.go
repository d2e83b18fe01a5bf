package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// Reading and parsing logs is most of a catch-up's work, and it is
// independent from one log to the next. While ingest handles a batch of
// files it keeps a pool of readers, one per core: the loop checks and
// routes each file, hands it to a reader, and applies the batches that come
// back, each in its file's order, to the records and the commit group.
// Committing stays in the loop alone, so a transaction still holds whole
// batches and a crash still resumes exactly; only the order in which
// different files' batches reach the group changes, which nothing depends
// on (a session's events are ordered by source when its map is built).

// tailJob is one file being read: what the reader needs (its own copies),
// and what the loop keeps to apply the batches.
type tailJob struct {
	// The reader's.
	p       watchers.Parser
	f       *os.File
	id      watchers.FileID
	size    int64
	cursor  watchers.Cursor // after the last batch produced
	log     *slog.Logger
	maxLine int
	// mustCommit asks for a last batch even without new lines: a reset
	// to record, a head not fingerprinted yet.
	mustCommit bool
	halt       atomic.Bool // set by the loop: produce no more

	// The loop's.
	s            *state.Source
	reset        bool
	resetSession string
	orig         state.Source
	sidecar      bool
	mod          int64
	committed    int64
	stopped      bool
}

// tailChunk is one batch a reader produced, or the error that ended it.
type tailChunk struct {
	job       *tailJob
	end       int64
	cursor    watchers.Cursor
	carry     []byte
	events    []event.Event
	encoded   []byte // the events' JSON, encoded by the reader
	lines     int64
	skipped   int64
	oversized int
	nothing   bool // the read ended with nothing to commit
	final     bool // the last chunk of its job
	err       error
	level     slog.Level
	msg       string
}

var errStopTail = errors.New("stop")

// read tails j's file and hands each batch to emit, which reports whether
// to go on. It runs on a reader of the pool, or in the loop without one.
// It touches only the job's own parser, file and copies.
func (j *tailJob) read(ctx context.Context, send func(*tailChunk) bool) {
	defer j.f.Close()
	ended := false
	emit := func(c *tailChunk) bool { // nothing after a final chunk
		if ended {
			return false
		}
		ended = c.final
		return send(c) && !c.final
	}
	var batch []event.Event
	var skipped, lines int64
	committed := j.cursor.Offset
	fail := func(end int64, level slog.Level, msg string, err error) {
		emit(&tailChunk{job: j, end: end, err: err, level: level, msg: msg, final: true})
	}
	produce := func(end int64, oversized int, final bool) bool {
		c, err := watchers.Advance(j.f, j.id, j.size, j.cursor, end)
		if err != nil {
			fail(end, slog.LevelWarn, "cannot read log", err)
			return false
		}
		carry, err := j.p.State()
		if err != nil {
			fail(end, slog.LevelError, "cannot save parser state", err)
			return false
		}
		var enc []byte
		if len(batch) > 0 {
			if enc, err = json.Marshal(batch); err != nil {
				fail(end, slog.LevelError, "cannot encode events", err)
				return false
			}
		}
		ch := &tailChunk{job: j, end: end, cursor: c, carry: carry, events: batch, encoded: enc,
			lines: lines, skipped: skipped, oversized: oversized, final: final}
		j.cursor, j.mustCommit = c, false
		committed, batch, lines, skipped = end, nil, 0, 0
		return emit(ch)
	}
	st, err := watchers.TailLines(j.f, j.cursor.Offset, j.size, j.maxLine, func(line []byte, end int64) error {
		lines++
		if !isBlank(line) {
			var perr error
			if batch, perr = safeLine(j.p, line, batch); perr != nil {
				skipped++
				j.log.Debug("line skipped", "offset", end, "err", perr)
			}
		}
		if len(batch) >= batchEvents || end-committed >= batchBytes {
			if !produce(end, 0, false) || ctx.Err() != nil {
				return errStopTail
			}
		}
		return nil
	})
	if errors.Is(err, errStopTail) {
		emit(&tailChunk{job: j, nothing: true, final: true})
		return
	}
	if err != nil {
		fail(st.End, slog.LevelWarn, "cannot read log", err)
		return
	}
	if st.Oversized > 0 {
		j.log.Warn("lines over the size cap skipped", "count", st.Oversized, "offset", st.End)
	}
	if st.End != committed || j.mustCommit || st.Oversized > 0 || j.cursor.HeadLen == 0 || len(batch) > 0 {
		produce(st.End, st.Oversized, true)
		return
	}
	emit(&tailChunk{job: j, nothing: true, final: true})
}

// tailPool is the readers of one ingest.
type tailPool struct {
	jobs    chan *tailJob
	results chan *tailChunk
	busy    map[uint64]*tailJob // by source id: jobs whose last chunk is not applied yet
	wg      sync.WaitGroup
}

// startTails gives ingest a pool of readers, one per core; stopTails
// applies what they still have and ends them.
func (d *Daemon) startTails(ctx context.Context) {
	n := runtime.GOMAXPROCS(0)
	tp := &tailPool{jobs: make(chan *tailJob), results: make(chan *tailChunk, 2*n), busy: map[uint64]*tailJob{}}
	for range n {
		tp.wg.Go(func() {
			for j := range tp.jobs {
				j.read(ctx, func(c *tailChunk) bool {
					tp.results <- c
					return !j.halt.Load()
				})
			}
		})
	}
	d.tails = tp
}

func (d *Daemon) stopTails() {
	tp := d.tails
	if tp == nil {
		return
	}
	for len(tp.busy) > 0 {
		d.applyResult(<-tp.results)
	}
	close(tp.jobs)
	tp.wg.Wait()
	d.tails = nil
}

// start hands a job to a free reader, applying results while all are busy.
func (tp *tailPool) start(d *Daemon, j *tailJob) {
	tp.busy[j.s.ID] = j
	for {
		select {
		case tp.jobs <- j:
			return
		case c := <-tp.results:
			d.applyResult(c)
		}
	}
}

// applyResult applies one chunk from a reader, in the loop. A job that
// must stop is told so by its next emit returning false; the reader sends
// nothing after a final chunk.
func (d *Daemon) applyResult(c *tailChunk) {
	j := c.job
	if !j.stopped && !d.applyChunk(c) {
		j.stopped = true
		j.halt.Store(true)
	}
	if c.final {
		delete(d.tails.busy, j.s.ID)
		d.tailDone(j)
	}
}

// waitTail returns once no reader works on the source: a file seen again
// within one ingest (a rename, a compressed copy) is read after the first
// read is applied.
func (d *Daemon) waitTail(id uint64) {
	tp := d.tails
	if tp == nil {
		return
	}
	for tp.busy[id] != nil {
		d.applyResult(<-tp.results)
	}
}
