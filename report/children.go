package report

import (
	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/watchers"
)

// countedOnce leaves out of maps each subagent session that a parent map
// among them holds as a lane: a spawned Codex agent has a map of its own
// (role subagent, parentSessionId) and is also a lane of its parent's map,
// so counting both would count its requests, tokens and calls twice. The
// format calls such sessions "usually hidden from lists; their work
// already appears inside their parent". A subagent whose parent is not in
// maps (its parent's log was gone before it was read, or a filter left the
// parent out), or whose parent's map has no lane of it (a Cursor
// sub-composer, a parent built without the child's log), is the only
// record of its work and stays.
func countedOnce(maps []*Map) []*Map {
	return keptOnce(maps, func(m **Map) *mapfile.Session { return &(*m).Session }, func(m **Map) []string {
		ids := make([]string, len((*m).Agents))
		for i, a := range (*m).Agents {
			ids[i] = a.ID
		}
		return ids
	})
}

// usageCountedOnce is countedOnce of the maps ss were kept of.
func usageCountedOnce(ss []UsageSession) []UsageSession {
	return keptOnce(ss, func(u *UsageSession) *mapfile.Session { return &u.session }, func(u *UsageSession) []string { return u.lanes })
}

// keptOnce is countedOnce of whatever keeps a map's session block and the
// ids of its lanes.
func keptOnce[T any](xs []T, session func(*T) *mapfile.Session, lanes func(*T) []string) []T {
	// The lanes are looked up only of the sessions a child names as its
	// parent: a store of 100,000 sessions has a few hundred.
	var laneSets map[string]map[string]bool // parent session id → its lanes
	for i := range xs {
		if s := session(&xs[i]); s.Role == "subagent" && s.ParentSessionID != "" {
			if laneSets == nil {
				laneSets = map[string]map[string]bool{}
			}
			laneSets[s.ParentSessionID] = nil
		}
	}
	if laneSets == nil {
		return xs
	}
	for i := range xs {
		id := session(&xs[i]).ID
		if _, parent := laneSets[id]; !parent {
			continue
		}
		ls := lanes(&xs[i])
		ids := make(map[string]bool, len(ls))
		for _, lane := range ls {
			ids[lane] = true
		}
		laneSets[id] = ids
	}
	out := make([]T, 0, len(xs))
	for i := range xs {
		if s := session(&xs[i]); s.Role == "subagent" && laneSets[s.ParentSessionID][watchers.LaneID(s.NativeID())] {
			continue
		}
		out = append(out, xs[i])
	}
	return out
}

// Sessions is how many sessions a report of maps shows: each spawned
// agent counted once, in its parent (see countedOnce), so that what a
// command says it wrote is what the page counts.
func Sessions(maps []*Map) int { return len(countedOnce(maps)) }
