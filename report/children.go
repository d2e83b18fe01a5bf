package report

import "github.com/agentmap/agentmap/watchers"

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
	children := 0
	for _, m := range maps {
		if m.Session.Role == "subagent" && m.Session.ParentSessionID != "" {
			children++
		}
	}
	if children == 0 {
		return maps
	}
	lanes := make(map[string]map[string]bool, len(maps)) // session id → its lanes
	for _, m := range maps {
		ids := make(map[string]bool, len(m.Agents))
		for _, a := range m.Agents {
			ids[a.ID] = true
		}
		lanes[m.Session.ID] = ids
	}
	out := make([]*Map, 0, len(maps))
	for _, m := range maps {
		if m.Session.Role == "subagent" && lanes[m.Session.ParentSessionID][watchers.LaneID(m.Session.NativeID())] {
			continue
		}
		out = append(out, m)
	}
	return out
}

// Sessions is how many sessions a report of maps shows: each spawned
// agent counted once, in its parent (see countedOnce), so that what a
// command says it wrote is what the page counts.
func Sessions(maps []*Map) int { return len(countedOnce(maps)) }
