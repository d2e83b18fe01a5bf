package daemon

import (
	"context"

	"github.com/agentmap/agentmap/state"
)

// Maps written by an earlier build, or with other map options. A map is
// written when its session changes; a session that no longer changes (most
// of a long history) would keep, after an upgrade whose builder makes other
// maps (builder.Version) or a change of the price table, the path mode,
// the hash key or the event cap, the map an earlier build or configuration
// made, and its costs and reports with it. So the state keeps the identity
// of the options the maps were last all written with
// (state.SettingMapIdentity, Options.MapIdentity: builder.Options.Identity),
// and a daemon whose identity is another writes every map again, as
// `flush --all --rewrite` does (rewrite.go): after its first catch-up, after
// a reload that changes it, and `scan` before it returns. Maps whose bytes
// are the same are left as they are. The identity is recorded only once a
// rewrite has written every map with it: a daemon stopped half way, or a
// map that could not be written, and the next start writes them all again.

// checkMapIdentity starts writing every map again when the maps were last
// all written with options of another identity, or records the identity
// when there is no map to write. A rewrite already under way is left to
// finish: its end checks again.
func (d *Daemon) checkMapIdentity() {
	id := d.opt.MapIdentity
	if id == "" || d.rewrite != nil || d.opt.NoAutoRewrite {
		return
	}
	was, err := d.db.Setting(state.SettingMapIdentity)
	if err != nil {
		d.log.Warn("cannot read the identity of the maps' options; the maps are not checked", "component", "flush", "err", err)
		return
	}
	if was == id {
		return
	}
	if len(d.sessions) == 0 && d.retired.len() == 0 {
		d.recordMapIdentity(id) // no map yet: every one to come is written with it
		return
	}
	n := len(d.sessions) + d.retired.len()
	d.log.Info("maps written by an earlier version or with other map options; writing every map again",
		"component", "flush", "sessions", n)
	if d.opt.Rewriting != nil {
		d.opt.Rewriting(n)
	}
	d.startRewrite(flushRequest{ctx: context.Background(), rewrite: true, all: true, reply: make(chan FlushResult, 1)})
	d.rewrite.auto = true
}

// RewriteStatus is a rewrite of every map under way.
type RewriteStatus struct {
	// Auto is set when the daemon began it for maps of other options
	// (an upgrade, a change of map options), not flush --all --rewrite.
	Auto bool `json:"auto"`
	// Left counts the sessions whose maps are still to write.
	Left int `json:"sessionsLeft"`
	// Pending is set when no daemon is writing them: the next scan or
	// start of the service will (PendingRewrite).
	Pending bool `json:"pending,omitempty"`
}

// PendingRewrite is, without a daemon, the rewrite the next scan or start
// of the service will make: nil when the maps were last all written with
// options of identity id (or there is no map), else the number of
// sessions whose maps were written with others (an earlier version's, or
// those a rewrite could not write). Their flush records say so; such a
// session reads as flushed, and its map as current, until it is written
// again.
func PendingRewrite(db *state.DB, id string) (*RewriteStatus, error) {
	if id == "" {
		return nil, nil
	}
	was, err := db.Setting(state.SettingMapIdentity)
	if err != nil || was == id {
		return nil, err
	}
	n := 0
	err = db.LoadPasses(state.Passes{Sessions: func(s *state.Session) error {
		if s.Flush != nil && s.Flush.Path != "" && s.Flush.Options != id {
			n++
		}
		return nil
	}})
	if err != nil || n == 0 {
		return nil, err
	}
	return &RewriteStatus{Auto: true, Pending: true, Left: n}, nil
}

func (d *Daemon) rewriteStatus() *RewriteStatus {
	if d.rewrite == nil {
		return nil
	}
	return &RewriteStatus{Auto: d.rewrite.auto, Left: len(d.rewrite.live) + len(d.rewrite.retired)}
}

// identityInEffect forgets the recorded identity when the options in
// effect are another's: from now on maps are written with these (by a
// catch-up, a flush), so the record no longer holds for every map, and
// only a rewrite's end records one again. Without this, options changed
// and changed back before a rewrite ended (two reloads, a scan with
// another config stopped half way) would find the old identity recorded
// and leave the maps written in between.
func (d *Daemon) identityInEffect() {
	id := d.opt.MapIdentity
	if id == "" {
		return
	}
	if was, err := d.db.Setting(state.SettingMapIdentity); err != nil || was == "" || was == id {
		return
	}
	if err := d.db.PutSetting(state.SettingMapIdentity, ""); err != nil {
		d.log.Warn("cannot forget the identity of the maps' options", "component", "flush", "err", err)
	}
}

// noteNewStore records the identity of the options in effect when the
// state holds no session yet: every map to come is written with them (a
// first scan is not followed by a rewrite of what it wrote).
func (d *Daemon) noteNewStore() {
	if d.opt.MapIdentity == "" || len(d.sessions) > 0 || d.retired.len() > 0 {
		return
	}
	if was, err := d.db.Setting(state.SettingMapIdentity); err == nil && was != d.opt.MapIdentity {
		d.recordMapIdentity(d.opt.MapIdentity)
	}
}

// rewroteAll records, at the end of a rewrite that wrote every map, the
// identity they were all written with. Options changed since it began
// (a reload) start another; a rewrite that left maps unwritten (a full
// disk, the daemon stopping, its client giving up) records nothing, and
// the next start or reload writes them all again, not this run over and
// over.
func (d *Daemon) rewroteAll(j *rewriteJob, complete bool) {
	switch {
	case j.identity != d.opt.MapIdentity:
		d.checkMapIdentity()
	case complete && j.identity != "" && j.res.Error == "" && len(j.res.Failed) == 0:
		d.recordMapIdentity(j.identity)
	}
}

func (d *Daemon) recordMapIdentity(id string) {
	if err := d.db.PutSetting(state.SettingMapIdentity, id); err != nil {
		d.log.Warn("cannot record the identity of the maps' options; the next start writes every map again", "component", "flush", "err", err)
	}
}

// rewriteAllOnce is checkMapIdentity for a one-shot catch-up: the rewrite,
// if one is due, is done before it returns.
func (d *Daemon) rewriteAllOnce(ctx context.Context) (FlushResult, bool) {
	d.checkMapIdentity()
	if d.rewrite == nil {
		return FlushResult{}, false
	}
	j := d.rewrite
	for ctx.Err() == nil && j.left() {
		d.rewriteChunk(ctx, j)
		if d.opt.RewriteLeft != nil {
			d.opt.RewriteLeft(len(j.live) + len(j.retired))
		}
	}
	d.endRewrite(ctx, j)
	return j.res, true
}

// rewriteChunk is a scan's step of a rewrite: up to rewriteChunkSessions sessions
// taken up, their maps built on every core and written in shared batches
// (flushMany), recorded, and let go of again. The maps it counts are not
// told apart into written and up to date: a scan prints neither.
func (d *Daemon) rewriteChunk(ctx context.Context, j *rewriteJob) {
	var keys, taken []string
	for len(keys) < rewriteChunkSessions && j.left() {
		key, fromRetired := d.nextToRewrite(j)
		if fromRetired {
			taken = append(taken, key) // let go of again, written or not
		}
		if s := d.sessions[key]; key == "" || s == nil || j.writtenWith(s) {
			continue
		}
		keys = append(keys, key)
	}
	d.checkMapBytes = true // a map damaged on disk is written again too
	failed := d.flushMany(ctx, keys)
	d.checkMapBytes = false
	for _, key := range keys {
		if failed[key] != nil {
			j.res.Failed = append(j.res.Failed, key)
		} else {
			j.res.Rewritten++
		}
	}
	d.recordFlushes()
	d.retireWritten(taken)
	d.releaseMapped(len(keys) * rewriteWeight)
}

// rewriteChunkSessions is how many sessions a scan's rewrite takes up at a time.
const rewriteChunkSessions = 256
