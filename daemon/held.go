package daemon

import (
	"context"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
)

// During a one-shot catch-up (`scan`) the events each source commits are
// also kept in memory, and a session's map is built from them rather than
// from the same events read back from the state database. That is exact
// because the held events of a source are, in order, what its committed
// batches stored: a source is held from a commit after which it has no
// other events stored (its first batch of events, or a reset, which drops
// the older ones in the same transaction); a batch is held only once its
// transaction committed; and a session is built from held events only
// when it was first seen in this run (no events of an earlier run can be
// stored under it) and every source it is built from is held.
//
// Memory stays bounded: once holdEvents events are held, the sessions held
// longest (not the last one, which the next log may continue) are written at once, between two logs of the catch-up, and their
// events let go of. A session that a later log feeds again (a Codex child
// rollout of another day, say) is dirty again, and written again at the
// end from the state database, as without holding.
// holdEvents is a variable for the tests, which make it small.
var holdEvents = 10000

type held struct {
	srcs   map[uint64][]event.Event
	fresh  map[string]bool // sessions first seen in this run, and still held
	order  []string        // sessions in the order they were first held
	events int
	early  int // sessions written early, to keep within holdEvents
}

func newHeld() held {
	return held{srcs: map[uint64][]event.Event{}, fresh: map[string]bool{}}
}

// holding reports whether this run holds events at all.
func (d *Daemon) holding() bool { return d.opt.Once && holdEvents > 0 }

// sessionCreated notes a session record made in this run.
func (d *Daemon) sessionCreated(key string) {
	if d.holding() {
		d.held.fresh[key] = true
		d.held.order = append(d.held.order, key)
	}
}

// committed holds the events of batches whose transaction committed.
func (d *Daemon) committed(bs []queued) {
	if !d.holding() {
		return
	}
	for _, q := range bs {
		b := q.batch
		id := b.Source.ID
		evs, ok := d.held.srcs[id]
		if !d.held.fresh[b.Source.Session] {
			// Its session is built from the events read back (one seen
			// before this run, or written already): holding them would
			// only take room until the end.
			if ok {
				d.held.events -= len(evs)
				delete(d.held.srcs, id)
			}
			continue
		}
		switch {
		case b.Reset || (len(b.Events) > 0 && b.Seq == 0):
			// Nothing else of this source is stored now.
			d.held.events -= len(evs)
			evs, ok = nil, true
		case !ok:
			continue
		}
		if len(evs) == 0 {
			// The batch's events are its own (cutAt copied them out of
			// the reader's buffer) and nothing changes them: held as
			// they are, clipped so that a later append never writes
			// into a slice another holds.
			evs = b.Events[:len(b.Events):len(b.Events)]
		} else {
			evs = append(evs, b.Events...)
		}
		d.held.srcs[id] = evs
		d.held.events += len(b.Events)
	}
}

// heldEvents returns the events of a session's sources (in the order
// given) when all of them are held.
func (d *Daemon) heldEvents(key string, srcs []*state.Source) (map[uint64][]event.Event, bool) {
	if !d.holding() || !d.held.fresh[key] {
		return nil, false
	}
	out := make(map[uint64][]event.Event, len(srcs))
	for _, s := range srcs {
		evs, ok := d.held.srcs[s.ID]
		if !ok {
			return nil, false
		}
		out[s.ID] = evs
	}
	return out, true
}

// letGo drops the held events of a session's sources: its map is being
// written from them. Events they commit later are read back.
func (d *Daemon) letGo(key string, srcs []*state.Source) {
	if !d.holding() {
		return
	}
	delete(d.held.fresh, key)
	for _, s := range srcs {
		d.held.events -= len(d.held.srcs[s.ID])
		delete(d.held.srcs, s.ID)
	}
}

// flushHeld writes, when too many events are held, the sessions held
// longest, until half of that is held or only the last one is left.
func (d *Daemon) flushHeld(ctx context.Context) {
	if !d.holding() || d.held.events < holdEvents {
		return
	}
	d.commitGroup()
	var keys []string
	pending := d.held.events
	// The session seen last stays: the next log may be more of it (a
	// Claude session's subagent files come just before its own log).
	for len(d.held.order) > 1 && pending >= holdEvents/2 {
		key := d.held.order[0]
		d.held.order = d.held.order[1:]
		if !d.held.fresh[key] {
			continue // written already
		}
		for _, s := range d.sourcesOf(key) {
			pending -= len(d.held.srcs[s.ID])
		}
		keys = append(keys, key)
	}
	if len(d.held.order) == 0 {
		d.held.order = nil // let the backing array go
	}
	d.held.early += len(keys)
	d.flushMany(ctx, keys)
	d.recordFlushes()
	d.retireWritten(keys)
}
