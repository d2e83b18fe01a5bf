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
//
// An entry of bySession and byFileID is a short list, not a map: most
// sessions have one source and most identities one file, and a list of one
// costs a few dozen bytes where a map of one costs a few hundred, for every
// session caught up on.
type indexes struct {
	bySession map[string]sourceList
	byFileID  map[watchers.FileID]sourceList
	noFileID  map[uint64]*state.Source // sources whose file has no known identity
	children  map[string]map[string]bool
	// pending holds the keys of sessions that may be dirty: flushDue and
	// nextDue look at these, not at every session. A full rescan adds any
	// dirty session it finds (a change made without marking).
	pending map[string]bool
}

func newIndexes() indexes {
	return indexes{
		bySession: map[string]sourceList{},
		byFileID:  map[watchers.FileID]sourceList{},
		noFileID:  map[uint64]*state.Source{},
		children:  map[string]map[string]bool{},
		pending:   map[string]bool{},
	}
}

// sourceList is one index entry: the sources last seen under a key, one
// record per source id.
type sourceList []*state.Source

// with returns the list holding s: in place of the record of the same id,
// or added.
func (l sourceList) with(s *state.Source) sourceList {
	for i, o := range l {
		if o.ID == s.ID {
			l[i] = s
			return l
		}
	}
	return append(l, s)
}

// holding keeps, in place, the entries for which keep is true.
func (l sourceList) holding(keep func(*state.Source) bool) sourceList {
	out := l[:0]
	for _, s := range l {
		if keep(s) {
			out = append(out, s)
		}
	}
	clear(l[len(out):]) // no pointer kept to a dropped record
	return out
}

// index records a source under its session and file identity as they are.
func (d *Daemon) index(s *state.Source) {
	if s.Session != "" {
		d.idx.bySession[s.Session] = d.idx.bySession[s.Session].with(s)
	}
	if id := (watchers.FileID{Dev: s.Dev, Ino: s.Ino}); id.Known() {
		d.idx.byFileID[id] = d.idx.byFileID[id].with(s)
	} else {
		d.idx.noFileID[s.ID] = s
	}
}

// live reports whether an index entry still names a record of the loop.
func (d *Daemon) live(s *state.Source) bool { return d.srcs[s.ID] == s }

// sessionSources returns the index entry of a session, pruned of the
// entries that no longer hold.
func (d *Daemon) sessionSources(key string) sourceList {
	l, ok := d.idx.bySession[key]
	if !ok {
		return nil
	}
	l = l.holding(func(s *state.Source) bool { return d.live(s) && s.Session == key })
	if len(l) == 0 {
		delete(d.idx.bySession, key)
	} else {
		d.idx.bySession[key] = l
	}
	return l
}

// sourcesOf returns the sources routed to a session, in no order.
func (d *Daemon) sourcesOf(key string) []*state.Source {
	return append([]*state.Source(nil), d.sessionSources(key)...)
}

// hasSources is len(sourcesOf(key)) > 0 without building the list: status
// asks it of every session on every publish.
func (d *Daemon) hasSources(key string) bool { return len(d.sessionSources(key)) > 0 }

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
	if l, ok := d.idx.byFileID[id]; ok {
		l = l.holding(func(s *state.Source) bool { return d.live(s) && (watchers.FileID{Dev: s.Dev, Ino: s.Ino}) == id })
		if len(l) == 0 {
			delete(d.idx.byFileID, id)
		} else {
			d.idx.byFileID[id] = l
		}
		out = append(out, l...)
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
