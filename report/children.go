package report

// countedOnce leaves out of maps each subagent session whose parent's map
// is among them: a spawned Codex agent has a map of its own (role
// subagent, parentSessionId) and is also a lane of its parent's map, so
// counting both would count its requests, tokens and calls twice. The
// format calls such sessions "usually hidden from lists; their work
// already appears inside their parent". A subagent whose parent is not in
// maps (its parent's log was gone before it was read, or a filter left
// the parent out) is the only record of its work and stays.
func countedOnce(maps []*Map) []*Map {
	ids := make(map[string]bool, len(maps))
	children := 0
	for _, m := range maps {
		ids[m.Session.ID] = true
		if m.Session.Role == "subagent" && m.Session.ParentSessionID != "" {
			children++
		}
	}
	if children == 0 {
		return maps
	}
	out := make([]*Map, 0, len(maps)-children)
	for _, m := range maps {
		if m.Session.Role == "subagent" && ids[m.Session.ParentSessionID] {
			continue
		}
		out = append(out, m)
	}
	return out
}
