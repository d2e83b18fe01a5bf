package daemon

import (
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
)

// Batches of several sources are committed together, in one transaction,
// when a wake-up reads many files: a catch-up over thousands of small logs
// then costs a few fsyncs, not one per file. Each batch is applied to the
// in-memory records when queued; if the transaction fails, the queued
// changes are undone in reverse order and the parsers involved are dropped
// (they read lines that will be read again).
const (
	groupBatches = 512
	groupEvents  = 20000
)

type queued struct {
	batch  state.Batch
	offset int64
	undo   func()
}

// queue adds a batch; the group is committed when it is large. It reports
// false when that commit failed.
func (d *Daemon) queue(b state.Batch, offset int64, undo func()) bool {
	d.group = append(d.group, queued{b, offset, undo})
	d.groupEvents += len(b.Events)
	if len(d.group) >= groupBatches || d.groupEvents >= groupEvents {
		return d.commitGroup()
	}
	return true
}

// commitGroup commits the queued batches; it is called at the end of every
// wake-up and before anything else writes to the state database.
func (d *Daemon) commitGroup() bool {
	if len(d.group) == 0 {
		return true
	}
	bs := make([]state.Batch, len(d.group))
	for i, q := range d.group {
		bs[i] = q.batch
	}
	err := d.db.CommitAll(bs)
	ids := make([]uint64, len(d.group))
	for i, q := range d.group {
		ids[i] = q.batch.Source.ID
	}
	if err != nil {
		d.log.Error("cannot commit; the lines will be read again", "component", "state", "err", err)
		for i := len(d.group) - 1; i >= 0; i-- {
			d.group[i].undo()
			delete(d.parsers, d.group[i].batch.Source.ID)
		}
		d.commitFailed(ids)
	} else {
		d.commitSucceeded(ids)
		d.committed(d.group)
		d.releaseMapped(d.groupEvents + len(d.group)*recordWeight)
	}
	if err == nil && d.log.Enabled(nil, -4) {
		for _, q := range d.group {
			d.log.Debug("committed", "component", "tail", "agent", q.batch.Source.Agent, "path", q.batch.Source.Path,
				"session", q.batch.Source.Session, "offset", q.offset, "events", len(q.batch.Events))
		}
	}
	clear(d.group) // the batches' events and encoded bytes are not kept reachable
	d.group, d.groupEvents = d.group[:0], 0
	return err == nil
}

// apply records a batch's effect on a source in memory and queues it: the
// source becomes next, the sessions are touched (changed: their maps are
// to be written again even without events, as after a reset). It reports
// false when the group commit this triggered failed.
func (d *Daemon) apply(s *state.Source, next state.Source, b state.Batch, events []event.Event, changed bool, mod, offset int64) bool {
	prev := *s
	d.stampParsed(s, &next, b.Reset)
	if b.Reset {
		// Every event the source committed is dropped: its batches count
		// from the start again, so that a source with batches counted has
		// some stored (the state check reads one without as damaged).
		next.NextSeq = 0
	}
	if len(events) > 0 {
		b.Seq = next.NextSeq
		next.NextSeq++
	}
	*s = next
	d.index(s)
	sessions, undoSessions := d.touch(s, events, changed, mod)
	b.Source, b.Events, b.Sessions = s, events, sessions
	return d.queue(b, offset, func() {
		*s = prev
		d.index(s)
		undoSessions()
	})
}
