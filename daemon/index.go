package daemon

import (
	"sort"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// The loop's lookups by session, by parent and by file identity go through
// these indexes, so that catching up on N sessions costs N, not N × N: a
// flush finds its session's sources and children, the routing of a new
// file finds the missing sources it might be, without walking every record.
//
// The indexes only ever gain entries where a record gains a value (a
// source routed, a cursor moved, a child found); a lookup checks each
// entry against the record as it is now and drops those that no longer
// hold. An entry too many costs a check; none is ever missing, whatever
// undo or reset put a record back to.
type indexes struct {
	bySession map[string]map[uint64]*state.Source
	byFileID  map[watchers.FileID]map[uint64]*state.Source
	noFileID  map[uint64]*state.Source // sources whose file has no known identity
	children  map[string]map[string]bool
	// pending holds the keys of sessions that may be dirty: flushDue and
	// nextDue look at these, not at every session. A full rescan adds any
	// dirty session it finds (a change made without marking).
	pending map[string]bool
}

func newIndexes() indexes {
	return indexes{
		bySession: map[string]map[uint64]*state.Source{},
		byFileID:  map[watchers.FileID]map[uint64]*state.Source{},
		noFileID:  map[uint64]*state.Source{},
		children:  map[string]map[string]bool{},
		pending:   map[string]bool{},
	}
}

// index records a source under its session and file identity as they are.
func (d *Daemon) index(s *state.Source) {
	if s.Session != "" {
		m := d.idx.bySession[s.Session]
		if m == nil {
			m = map[uint64]*state.Source{}
			d.idx.bySession[s.Session] = m
		}
		m[s.ID] = s
	}
	if id := (watchers.FileID{Dev: s.Dev, Ino: s.Ino}); id.Known() {
		m := d.idx.byFileID[id]
		if m == nil {
			m = map[uint64]*state.Source{}
			d.idx.byFileID[id] = m
		}
		m[s.ID] = s
	} else {
		d.idx.noFileID[s.ID] = s
	}
}

// live reports whether an index entry still names a record of the loop.
func (d *Daemon) live(s *state.Source) bool { return d.srcs[s.ID] == s }

// sourcesOf returns the sources routed to a session, in no order.
func (d *Daemon) sourcesOf(key string) []*state.Source {
	m := d.idx.bySession[key]
	var out []*state.Source
	for id, s := range m {
		if !d.live(s) || s.Session != key {
			delete(m, id)
			continue
		}
		out = append(out, s)
	}
	if len(m) == 0 {
		delete(d.idx.bySession, key)
	}
	return out
}

// hasSources is len(sourcesOf(key)) > 0 without building the list: status
// asks it of every session on every publish.
func (d *Daemon) hasSources(key string) bool {
	m := d.idx.bySession[key]
	for id, s := range m {
		if d.live(s) && s.Session == key {
			return true
		}
		delete(m, id)
	}
	if m != nil && len(m) == 0 {
		delete(d.idx.bySession, key)
	}
	return false
}

// indexChild records that a session names a parent.
func (d *Daemon) indexChild(child *state.Session) {
	if child.Parent == "" {
		return
	}
	m := d.idx.children[child.Parent]
	if m == nil {
		m = map[string]bool{}
		d.idx.children[child.Parent] = m
	}
	m[child.Key] = true
}

// childrenOf returns the keys of the sessions whose parent is key, sorted.
func (d *Daemon) childrenOf(key string) []string {
	m := d.idx.children[key]
	var out []string
	for ck := range m {
		if c := d.sessions[ck]; c == nil || c.Parent != key || ck == key {
			delete(m, ck)
			continue
		}
		out = append(out, ck)
	}
	if len(m) == 0 {
		delete(d.idx.children, key)
	}
	sort.Strings(out)
	return out
}

// movedCandidates returns the sources a file with identity id might be:
// those last seen with that identity and those whose identity is unknown.
// Without an identity for the file, every source is a candidate.
func (d *Daemon) movedCandidates(id watchers.FileID) []*state.Source {
	if !id.Known() {
		out := make([]*state.Source, 0, len(d.srcs))
		for _, s := range d.srcs {
			out = append(out, s)
		}
		return out
	}
	var out []*state.Source
	m := d.idx.byFileID[id]
	for sid, s := range m {
		if !d.live(s) || (watchers.FileID{Dev: s.Dev, Ino: s.Ino}) != id {
			delete(m, sid)
			continue
		}
		out = append(out, s)
	}
	if len(m) == 0 {
		delete(d.idx.byFileID, id)
	}
	for sid, s := range d.idx.noFileID {
		if !d.live(s) || (watchers.FileID{Dev: s.Dev, Ino: s.Ino}).Known() {
			delete(d.idx.noFileID, sid)
			continue
		}
		out = append(out, s)
	}
	return out
}

// mark notes that a session may have become dirty.
func (d *Daemon) mark(key string) {
	d.marks++
	if key != "" {
		d.idx.pending[key] = true
	}
}

// pendingKeys returns the sessions that may be dirty, sorted, forgetting
// those that are clean or gone.
func (d *Daemon) pendingKeys() []string {
	out := make([]string, 0, len(d.idx.pending))
	for k := range d.idx.pending {
		if s := d.sessions[k]; s == nil || !s.Dirty() {
			delete(d.idx.pending, k)
			continue
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// markDirty adds every dirty session to pending: the once-a-rescan sweep
// that keeps pending true even after a change that did not mark.
func (d *Daemon) markDirty() {
	for k, s := range d.sessions {
		if s.Dirty() {
			d.idx.pending[k] = true
		}
	}
}
