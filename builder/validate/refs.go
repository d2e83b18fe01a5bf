package validate

// sequence checks that events[i].seq == i and that t starts at or after 0
// and never goes back.
func (c *checker) sequence() {
	prev := 0.0
	for i, v := range c.events {
		ev := object(v)
		if ev == nil {
			continue
		}
		seq, ok := integer(ev["seq"])
		switch {
		case ev["seq"] == nil:
			c.add(ptr("events", i), RuleSeq, "has no seq")
		case !ok:
			// the schema reports the type
		case seq != int64(i):
			c.add(ptr("events", i, "seq"), RuleSeq, "is %d, want %d", seq, i)
		}
		t, ok := number(ev["t"])
		if !ok {
			continue
		}
		if t < 0 {
			c.add(ptr("events", i, "t"), RuleTime, "is negative")
		}
		if t < prev {
			c.add(ptr("events", i, "t"), RuleTime, "goes back in time (%v after %v)", t, prev)
		}
		prev = max(prev, t)
	}
	// durationMs runs from the first event to the last, so no event lies
	// beyond it.
	session := object(c.top["session"])
	if d, ok := number(session["durationMs"]); ok && prev > d {
		c.add(ptr("session", "durationMs"), RuleTime, "is %v, before the last event at t=%v", d, prev)
	}
}

// references checks every id and seq a map uses against what it declares.
func (c *checker) references(top map[string]any) {
	n := int64(len(c.events))
	// seqRef checks an optional seq reference; below bounds it when the
	// reference must point back (retryOf), -1 when any event will do.
	seqRef := func(path string, v any, below int64) (int64, bool) {
		if v == nil {
			return 0, false
		}
		s, ok := integer(v)
		if !ok {
			return 0, false
		}
		switch {
		case s < 0 || s >= n:
			c.add(path, RuleSeqRef, "seq %d is outside the %d events", s, n)
			return s, false
		case below >= 0 && s >= below:
			c.add(path, RuleSeqRef, "seq %d does not point back", s)
			return s, false
		}
		return s, true
	}

	for i, v := range array(top["agents"]) {
		a := object(v)
		p, hasParent := str(a["parent"])
		switch {
		case hasParent && !c.agents[p]:
			c.add(ptr("agents", i, "parent"), RuleAgentRef, "names no agent")
		case a["kind"] == "subagent" && hasParent && p != "main":
			// The format page: a subagent has no further nesting.
			c.add(ptr("agents", i, "parent"), RuleAgentRef, "a subagent lane must hang off main")
		case a["kind"] == "main" && hasParent:
			c.add(ptr("agents", i, "parent"), RuleAgentRef, "the main lane has no parent")
		}
		if s, ok := seqRef(ptr("agents", i, "launchSeq"), a["launchSeq"], -1); ok {
			if k := c.eventKind(int(s)); k != "subagent" {
				c.add(ptr("agents", i, "launchSeq"), RuleSeqRef, "points at an event of kind %s, not subagent", safeKind(k))
			}
		}
	}
	for i, v := range array(top["files"]) {
		f := object(v)
		if r, ok := str(f["repo"]); ok && !c.repos[r] {
			c.add(ptr("files", i, "repo"), RuleRepoRef, "names no repo")
		}
		seqRef(ptr("files", i, "first"), f["first"], -1)
	}
	for i, v := range array(top["tasks"]) {
		t := object(v)
		start, okStart := seqRef(ptr("tasks", i, "startSeq"), t["startSeq"], -1)
		end, okEnd := seqRef(ptr("tasks", i, "endSeq"), t["endSeq"], -1)
		if okStart && okEnd && end < start {
			c.add(ptr("tasks", i, "endSeq"), RuleSeqRef, "ends at %d, before its start %d", end, start)
		}
	}
	for i, v := range array(top["prs"]) {
		seqRef(ptr("prs", i, "seq"), object(v)["seq"], -1)
	}

	for i, v := range c.events {
		ev := object(v)
		if ev == nil {
			continue
		}
		if a, ok := str(ev["agent"]); ok && !c.agents[a] {
			c.add(ptr("events", i, "agent"), RuleAgentRef, "names no agent")
		}
		if child, ok := str(ev["child"]); ok && !c.agents[child] {
			c.add(ptr("events", i, "child"), RuleAgentRef, "names no agent")
		}
		if task, ok := integer(ev["task"]); ok {
			if !c.hasTask {
				c.add(ptr("events", i, "task"), RuleTaskRef, "the map has no tasks")
			} else if !c.tasks[task] {
				c.add(ptr("events", i, "task"), RuleTaskRef, "task %d is not in tasks", task)
			}
		}
		for j, t := range array(ev["targets"]) {
			if f, ok := integer(object(t)["file"]); ok && !c.files[f] {
				c.add(ptr("events", i, "targets", j, "file"), RuleFileRef, "file %d is not in files", f)
			}
		}
		seqRef(ptr("events", i, "retryOf"), ev["retryOf"], int64(i))
		switch ev["kind"] {
		case "error", "delay":
			seqRef(ptr("events", i, "ref"), ev["ref"], -1)
		case "commit":
			if r, ok := str(ev["repo"]); ok && !c.repos[r] && !remoteShape.MatchString(r) {
				c.add(ptr("events", i, "repo"), RuleRepoRef, "is neither a repo id nor owner/name")
			}
		}
	}
}

// safeKind prints an event kind only when it is one the format defines.
func safeKind(k string) string {
	known, err := fields()
	if err == nil && known.eventKind[k] != nil {
		return k
	}
	return "unknown"
}
