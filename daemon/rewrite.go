package daemon

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmap/agentmap/state"
)

// rewriteSlice bounds how long the loop writes maps of a rewrite before it
// goes back to following the logs: a rewrite of a long history takes
// minutes, and the logs that grow meanwhile are read between its slices.
const rewriteSlice = 100 * time.Millisecond

// rewriteWeight is what a session a rewrite writes counts towards letting
// go of the state's mapped pages (releaseMapped): its records and events
// are read back from pages spread over the database, some of them alone on
// their pages, so that counting its events, as a catch-up's flush does,
// let some 150 MB of pages be resident in a rewrite of 100,000 sessions.
const rewriteWeight = releaseEvery / 250

// rewriteJob writes every session's map again with the map options in
// effect, up to date or not (flush --all --rewrite, after a change of path
// mode). The sessions in memory and those let go of are listed when it
// starts; it takes up one let go of at a time, so that memory stays what
// it is, and each map written lets its session go again as any flush does.
// Its answer counts the maps (Rewritten) and, among them, those that were
// already the bytes the options in effect make (Current); a session that
// makes no map is in neither.
type rewriteJob struct {
	ctx     context.Context // the request's: a client that gives up stops it
	live    []string
	retired []retiredSession
	res     FlushResult
	reply   chan FlushResult
	// identity is that of the options the rewrite writes with, recorded
	// when it has written every map (identity.go).
	identity string
	auto     bool // begun by the daemon (identity.go), not asked for
	// unrestored counts the sessions let go of whose records could not be
	// read back: their maps were not written.
	unrestored int
}

type retiredSession struct {
	h   uint64
	ids []uint64
}

// firstID is the first of a retired session's source ids, 0 for none (no
// source has id 0).
func firstID(ids []uint64) uint64 {
	if len(ids) == 0 {
		return 0
	}
	return ids[0]
}

// startRewrite begins a rewrite; its answer comes when the last map is
// written (rewriteSome).
func (d *Daemon) startRewrite(r flushRequest) {
	if d.rewrite != nil && d.rewrite.auto {
		// The daemon's own rewrite (identity.go) gives way to the one
		// asked for, which writes every map with the same options and
		// answers for them all.
		d.rewrite = nil
	}
	if d.rewrite != nil {
		r.reply <- FlushResult{Error: "every map is being written again already"}
		return
	}
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	d.commitGroup()
	j := &rewriteJob{ctx: ctx, live: d.sessionKeys(), reply: r.reply, res: FlushResult{Flushed: []string{}}, identity: d.opt.MapIdentity}
	d.retired.each(func(h uint64, ids []uint64) {
		// A copy: the set's own slices change as sessions come and go.
		j.retired = append(j.retired, retiredSession{h, append([]uint64(nil), ids...)})
	})
	d.rewrite = j
}

// rewriteSome writes the next slice of a rewrite's maps, and answers the
// request once they are all written, or once it or the daemon stops.
func (d *Daemon) rewriteSome(ctx context.Context) {
	j := d.rewrite
	if j == nil {
		return
	}
	// The sessions taken up for the slice are let go of again once their
	// flushes are recorded: a daemon that follows does it as any flush
	// does (retireWrittenIdle), a scan here, so that a scan's rewrite of
	// every map holds one slice's sessions at a time, not all of them.
	var taken []string
	defer func() {
		d.recordFlushes()
		d.retireWritten(taken)
	}()
	until := time.Now().Add(rewriteSlice)
	for time.Now().Before(until) && ctx.Err() == nil && j.ctx.Err() == nil && j.left() {
		key, fromRetired := d.nextToRewrite(j)
		if fromRetired {
			taken = append(taken, key)
		}
		s := d.sessions[key]
		if key == "" || s == nil {
			continue // gone since: forgotten, or its records lost
		}
		if j.writtenWith(s) {
			j.res.Rewritten++
			j.res.Current++
			continue
		}
		before := mapAt(d.store.Root, s.Flush)
		d.checkMapBytes = true // a map damaged on disk is written again too
		writes := d.mapWrites
		err := d.flush(key)
		d.checkMapBytes = false
		// The state's pages its records and events were read from, let go
		// of as a catch-up's are (releaseMapped): a rewrite reads them all.
		d.releaseMapped(rewriteWeight)
		if err != nil {
			j.res.Failed = append(j.res.Failed, key)
			continue
		}
		// Only a session with a map counts: one whose events make none
		// (no events yet, a lane whose parent log is gone) is flushed
		// all the same, and counting it said more maps than the store
		// holds.
		switch after := mapAt(d.store.Root, s.Flush); {
		case after == nil:
		case before != nil && before.Path == after.Path && before.SHA256 == after.SHA256 && d.mapWrites == writes:
			j.res.Rewritten++
			j.res.Current++ // the same bytes: left as it was
		default:
			j.res.Rewritten++
		}
	}
	d.endRewrite(ctx, j)
}

// writtenWith reports whether the daemon's own rewrite may pass over a
// session: its map was written, and nothing changed since, with the
// options the rewrite writes with (a session read again after an upgrade,
// one written before a crash stopped the rewrite half way). A rewrite
// asked for writes every map, and checks its bytes on disk.
func (j *rewriteJob) writtenWith(s *state.Session) bool {
	return j.auto && j.identity != "" && s.Flush != nil && s.Flush.Options == j.identity && !s.Dirty()
}

// left reports whether sessions are left for the rewrite to write.
func (j *rewriteJob) left() bool { return len(j.live) > 0 || len(j.retired) > 0 }

// nextToRewrite takes up the next session of a rewrite: its key ("" when
// it is gone or its records could not be read back, counted), and whether
// it was taken up from the sessions let go of (to be let go of again).
func (d *Daemon) nextToRewrite(j *rewriteJob) (key string, fromRetired bool) {
	if len(j.live) > 0 {
		key, j.live = j.live[0], j.live[1:]
		if d.sessions[key] == nil {
			// Let go of since the rewrite began.
			if s, retired := d.restore(key); s == nil && retired {
				j.unrestored++ // its records could not be read back: not written
			}
		}
		return key, false
	}
	r := j.retired[0]
	j.retired = j.retired[1:]
	if ids, ok := d.retired.idsOf(r.h); ok {
		if key = d.restoreRetired(r.h, ids); key == "" {
			j.unrestored++ // its records could not be read back: not written
			return "", false
		}
		return key, true
	}
	if src := d.srcs[firstID(r.ids)]; src != nil && retiredKeyHash(src.Session) == r.h {
		// Taken up since the rewrite began (a scan or a flush asked of the
		// daemon, a log that changed): written here all the same.
		return src.Session, false
	}
	return "", false
}

// endRewrite answers a rewrite once every map is written, or once it or
// the daemon stops, and records the options' identity when it wrote them
// all (identity.go); it leaves a rewrite with sessions left running.
func (d *Daemon) endRewrite(ctx context.Context, j *rewriteJob) {
	complete := false
	switch {
	case ctx.Err() != nil:
		j.res.Error = "the daemon stopped before every map was written again"
	case j.ctx.Err() != nil:
		// The client gave up: nobody reads the answer.
	case j.left():
		return
	default:
		complete = j.unrestored == 0
	}
	j.reply <- j.res
	d.rewrite = nil
	// Rewritten counts every map gone through, Current those of them
	// that came out the same (as flush --all --rewrite says it).
	d.log.Info("every map written again", "component", "flush", "changed", j.res.Rewritten-j.res.Current, "up_to_date", j.res.Current,
		"failed", len(j.res.Failed), "complete", complete)
	d.rewroteAll(j, complete)
}

// mapAt is a session's flush record when its map is in the store, nil
// when it has none: no map written, or its file gone (a flush writes it
// again).
func mapAt(root string, f *state.Flush) *state.Flush {
	if f == nil || f.Path == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(root, f.Path)); err != nil {
		return nil
	}
	return f
}
