package builder

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
)

// The reference encoder: how maps were encoded before their parts were
// appended by hand, kept to check the hand-written encoder against (see
// TestEncodeMatchesReference).

// referenceCanonical is the general encoding of a map: its document as a
// tree of maps through CanonicalJSON (events through a sorted field list),
// the parts spliced. The encoder by hand must give the same bytes.
func referenceCanonical(m *Map) ([]byte, error) {
	doc := referenceTree(m)
	delete(doc, "contentHash")
	// Encode each top-level part once and splice the two documents (the
	// hashed one and the written one) from the parts: they differ only in
	// session.cliVersion and contentHash, and the events dominate the cost.
	parts := make(map[string][]byte, len(doc)+2)
	events, err := encodeEvents(m.Events)
	if err != nil {
		return nil, err
	}
	parts["events"] = events
	for k, v := range doc {
		if k == "session" {
			continue
		}
		b, err := CanonicalJSON(v)
		if err != nil {
			return nil, err
		}
		parts[k] = b
	}
	session := doc["session"].(map[string]any)
	version := session["cliVersion"]
	delete(session, "cliVersion")
	sb, err := CanonicalJSON(session)
	if err != nil {
		return nil, err
	}
	parts["session"] = sb
	sum := sha256.Sum256(spliceObject(parts))
	m.ContentHash = hex.EncodeToString(sum[:])
	session["cliVersion"] = version
	if parts["session"], err = CanonicalJSON(session); err != nil {
		return nil, err
	}
	parts["contentHash"], _ = CanonicalJSON(m.ContentHash)
	return spliceObject(parts), nil
}

// spliceObject writes a canonical object from already canonical values.
func spliceObject(parts map[string][]byte) []byte {
	keys := make([]string, 0, len(parts))
	size := 2
	for k, v := range parts {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Grow(size)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(&buf, k)
		buf.WriteByte(':')
		buf.Write(parts[k])
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

func referenceTree(m *Map) map[string]any {
	doc := map[string]any{
		"schema":  m.Schema,
		"session": referenceSession(&m.Session),
		"totals":  referenceTotals(&m.Totals),
	}
	if m.ContentHash != "" {
		doc["contentHash"] = m.ContentHash
	}
	repos := make([]any, len(m.Repos))
	for i, r := range m.Repos {
		o := map[string]any{"id": r.ID, "name": r.Name}
		if r.Remote != "" {
			o["remote"] = r.Remote
		}
		repos[i] = o
	}
	doc["repos"] = repos
	files := make([]any, len(m.Files))
	for i, f := range m.Files {
		o := map[string]any{"id": f.ID, "repo": f.Repo, "path": f.Path,
			"reads": f.Reads, "edits": f.Edits, "hits": f.Hits, "first": f.First}
		if f.Op != "" {
			o["op"] = f.Op
		}
		files[i] = o
	}
	doc["files"] = files
	agents := make([]any, len(m.Agents))
	for i, a := range m.Agents {
		agents[i] = referenceAgent(&a)
	}
	doc["agents"] = agents
	if m.Tasks != nil {
		tasks := make([]any, len(m.Tasks))
		for i, t := range m.Tasks {
			tasks[i] = map[string]any{"n": t.N, "id": t.ID, "name": t.Name, "source": t.Source,
				"startSeq": t.StartSeq, "endSeq": t.EndSeq, "startT": t.StartT, "endT": t.EndT,
				"firstTurn": t.FirstTurn, "lastTurn": t.LastTurn}
		}
		doc["tasks"] = tasks
	}
	prs := make([]any, len(m.PRs))
	for i, p := range m.PRs {
		o := map[string]any{"provider": p.Provider, "repo": p.Repo, "number": p.Number,
			"seq": p.Seq, "state": p.State}
		if p.URL != "" {
			o["url"] = p.URL
		}
		prs[i] = o
	}
	doc["prs"] = prs
	return doc
}

func referenceAgent(a *Agent) map[string]any {
	o := map[string]any{
		"id": a.ID, "parent": nil, "kind": a.Kind, "start": a.Start, "end": a.End,
		"calls": a.Calls, "requests": a.Requests, "tokens": a.Tokens, "cost": a.Cost,
		"outcome": a.Outcome,
	}
	if a.Parent != "" {
		o["parent"] = a.Parent
	}
	if a.SubagentType != "" {
		o["subagentType"] = a.SubagentType
	}
	if a.Model != "" {
		o["model"] = a.Model
	}
	if a.LaunchSeq != nil {
		o["launchSeq"] = *a.LaunchSeq
	}
	return o
}

// encodeEvents writes the canonical JSON array of the events.
func encodeEvents(events []Event) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(events) * 200)
	var l fieldList
	var scratch bytes.Buffer
	buf.WriteByte('[')
	for i := range events {
		if i > 0 {
			buf.WriteByte(',')
		}
		l.reset()
		scratch.Reset()
		events[i].fields(&l, &scratch)
		if err := l.write(&buf); err != nil {
			return nil, err
		}
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

// fields lists the event's fields: the common ones, then those of its kind.
// Nested objects (targets, vcs) are written into scratch, which must stay
// untouched until the list is written.
func (e *Event) fields(o *fieldList, scratch *bytes.Buffer) {
	o.int("seq", int64(e.Seq))
	o.int("t", e.T)
	o.str("kind", e.Kind)
	o.str("agent", e.Agent)
	o.bool("err", e.Err)
	if e.Task > 0 {
		o.int("task", int64(e.Task))
	}
	o.optStr("model", e.Model)
	if isCallKind(e.Kind) {
		e.callFields(o, scratch)
		return
	}
	switch e.Kind {
	case "llm":
		o.int("in", e.In)
		o.int("cw", e.CW)
		o.int("cr", e.CR)
		o.int("out", e.Out)
		if e.Cost > 0 {
			o.float("cost", e.Cost)
		}
		if e.Latency != nil {
			o.int("latency", *e.Latency)
		}
		o.optStr("stop", e.Stop)
		o.bool("thinking", e.Thinking)
		o.int("toolCalls", int64(e.ToolCalls))
		o.int("textChars", int64(e.TextChars))
	case "user":
		o.int("chars", int64(e.Chars))
		o.int("images", int64(e.Images))
		o.int("urls", int64(e.URLs))
	case "error":
		o.str("source", e.Source)
		o.str("errClass", e.ErrClass)
		o.optStr("hook", e.Hook)
		o.optStr("hookEvent", e.HookEvent)
		o.optStr("srcUuid", e.SrcUUID)
		if e.Ref != nil {
			o.int("ref", int64(*e.Ref))
		}
		if e.Retry > 0 {
			o.int("retry", int64(e.Retry))
		}
	case "delay":
		o.str("cause", e.Cause)
		o.int("ms", e.Ms)
		if e.Ref != nil {
			o.int("ref", int64(*e.Ref))
		}
	case "compaction":
		o.optStr("trigger", e.Trigger)
		o.int("preTokens", e.PreTokens)
		o.int("postTokens", e.PostTokens)
		o.int("ms", e.Ms)
	case "commit":
		o.optStr("repo", e.Repo)
		o.str("sha", e.SHA)
		o.int("files", int64(e.Files))
		o.int("ins", int64(e.Ins))
		o.int("del", int64(e.Del))
	case "pr_merge", "pr_close", "pr_comment":
		o.str("repo", e.Repo)
		o.int("number", int64(e.Number))
		o.optStr("url", e.URL)
	case "ticket":
		o.str("tracker", e.Tracker)
		o.str("action", e.Action)
		o.str("id", e.ID)
	case "artifact":
		o.str("url", e.URL)
		o.optStr("version", e.Version)
	case "skill_write":
		o.str("name", e.Name)
		o.str("action", e.Action)
	case "model_switch":
		o.str("from", e.From)
		o.str("to", e.To)
	}
}

func (e *Event) callFields(o *fieldList, scratch *bytes.Buffer) {
	o.optStr("cat", e.Cat)
	switch e.Kind {
	case "mcp":
		o.str("server", e.Server)
		o.str("tool", e.Tool)
		e.outAndDur(o)
	case "skill":
		o.str("skill", e.Skill)
	case "subagent":
		o.optStr("subagentType", e.SubagentType)
		o.optStr("child", e.Child)
	case "web":
		o.str("host", e.Host)
	case "tool":
		o.str("tool", e.Tool)
	default: // read, search, edit, exec, verify
		o.str("tool", e.Tool)
		if e.Kind == "exec" || e.Kind == "verify" {
			o.optStr("verb", e.Verb)
		}
		// Nested objects are written by hand with their keys in order.
		start := scratch.Len()
		scratch.WriteByte('[')
		for i, t := range e.Targets {
			if i > 0 {
				scratch.WriteByte(',')
			}
			if t.File < 0 {
				scratch.WriteString(`{"label":`)
				writeString(scratch, t.Label)
				scratch.WriteString(`,"scope":"outside","touch":`)
				writeString(scratch, t.Touch)
				scratch.WriteByte('}')
				continue
			}
			scratch.WriteString(`{"file":`)
			scratch.WriteString(strconv.Itoa(t.File))
			if t.Op != "" {
				scratch.WriteString(`,"op":`)
				writeString(scratch, t.Op)
			}
			scratch.WriteString(`,"touch":`)
			writeString(scratch, t.Touch)
			scratch.WriteByte('}')
		}
		scratch.WriteByte(']')
		targetsEnd := scratch.Len()
		e.outAndDur(o)
		if v := e.VCS; v != nil {
			scratch.WriteString(`{"action":`)
			writeString(scratch, v.Action)
			if v.Number > 0 {
				scratch.WriteString(`,"number":`)
				scratch.WriteString(strconv.Itoa(v.Number))
			}
			scratch.WriteString(`,"provider":`)
			writeString(scratch, v.Provider)
			if v.Repo != "" {
				scratch.WriteString(`,"repo":`)
				writeString(scratch, v.Repo)
			}
			scratch.WriteByte('}')
			o.raw("vcs", scratch.Bytes()[targetsEnd:])
		}
		// Taken after the last write to scratch, so that both slices see
		// its final backing array.
		o.raw("targets", scratch.Bytes()[start:targetsEnd])
	}
	o.optStr("errClass", e.ErrClass)
	if e.ExitCode != nil {
		o.int("exitCode", int64(*e.ExitCode))
	}
	if e.RetryOf != nil {
		o.int("retryOf", int64(*e.RetryOf))
	}
	if e.Attempt > 0 {
		o.int("attempt", int64(e.Attempt))
	}
}

func (e *Event) outAndDur(o *fieldList) {
	if e.OutBytes != nil {
		o.int("outBytes", *e.OutBytes)
	}
	if e.Dur != nil {
		o.int("dur", *e.Dur)
	}
}

// fieldList writes one canonical JSON object without building a map: the
// fields are collected in any order, sorted by key (a handful per object)
// and written. Events are by far the largest part of a map, so they are
// encoded this way; the result is byte-identical to CanonicalJSON.
type fieldList struct {
	fs []field
}

type field struct {
	key  string
	kind byte // 'i' int, 's' string, 'b' bool, 'f' float, 'r' raw canonical JSON
	i    int64
	s    string
	raw  []byte
	f    float64
}

func (l *fieldList) reset() { l.fs = l.fs[:0] }

func (l *fieldList) int(k string, v int64) { l.fs = append(l.fs, field{key: k, kind: 'i', i: v}) }
func (l *fieldList) str(k, v string)       { l.fs = append(l.fs, field{key: k, kind: 's', s: v}) }
func (l *fieldList) float(k string, v float64) {
	l.fs = append(l.fs, field{key: k, kind: 'f', f: v})
}
func (l *fieldList) raw(k string, v []byte) { l.fs = append(l.fs, field{key: k, kind: 'r', raw: v}) }
func (l *fieldList) bool(k string, v bool) {
	var i int64
	if v {
		i = 1
	}
	l.fs = append(l.fs, field{key: k, kind: 'b', i: i})
}

// optStr adds a string field only when it is not empty.
func (l *fieldList) optStr(k, v string) {
	if v != "" {
		l.str(k, v)
	}
}

func (l *fieldList) write(buf *bytes.Buffer) error {
	fs := l.fs
	for i := 1; i < len(fs); i++ { // insertion sort: few fields, no allocation
		for j := i; j > 0 && fs[j].key < fs[j-1].key; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
	buf.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, f.key)
		buf.WriteByte(':')
		switch f.kind {
		case 'i':
			buf.WriteString(strconv.FormatInt(f.i, 10))
		case 's':
			writeString(buf, f.s)
		case 'b':
			if f.i == 1 {
				buf.WriteString("true")
			} else {
				buf.WriteString("false")
			}
		case 'f':
			if err := writeFloatValue(buf, f.f); err != nil {
				return err
			}
		case 'r':
			buf.Write(f.raw)
		}
	}
	buf.WriteByte('}')
	return nil
}

func referenceSession(s *Session) map[string]any {
	models := make([]any, len(s.Models))
	for i, m := range s.Models {
		models[i] = m
	}
	o := map[string]any{
		"id": s.ID, "agentTool": s.AgentTool, "cliVersion": s.CLIVersion,
		"durationMs": s.DurationMs, "models": models, "pathMode": s.PathMode,
		"truncated": s.Truncated, "outcome": s.Outcome, "role": s.Role,
		"parentSessionId": nil,
	}
	if s.StartedAt != "" {
		o["startedAt"] = s.StartedAt
	}
	if s.ParentSessionID != "" {
		o["parentSessionId"] = s.ParentSessionID
	}
	return o
}

func referenceTotals(t *Totals) map[string]any {
	byClass := make(map[string]any, len(t.ErrorsByClass))
	for k, v := range t.ErrorsByClass {
		byClass[k] = v
	}
	return map[string]any{
		"calls": t.Calls, "requests": t.Requests, "userTurns": t.UserTurns,
		"subagents": t.Subagents, "errors": t.Errors, "tokens": t.Tokens,
		"costUsd":      t.CostUSD,
		"filesTouched": t.FilesTouched, "filesCreated": t.FilesCreated, "filesDeleted": t.FilesDeleted,
		"errorsBySource": map[string]any{
			"tool": t.ErrorsBySource.Tool, "mcp": t.ErrorsBySource.MCP, "llm": t.ErrorsBySource.LLM,
			"hook": t.ErrorsBySource.Hook, "orchestration": t.ErrorsBySource.Orchestration,
		},
		"errorsByClass": byClass,
		"retries":       t.Retries, "delays": t.Delays, "delayMs": t.DelayMs,
		"maxContext": t.MaxContext, "compactions": t.Compactions,
		"llmLatencyP50": t.LLMLatencyP50, "llmLatencyP95": t.LLMLatencyP95,
		"outputTokens": t.OutputTokens, "tasks": t.Tasks,
		"prsCreated": t.PRsCreated, "prsMerged": t.PRsMerged, "prsClosed": t.PRsClosed,
		"prComments": t.PRComments, "commits": t.Commits,
		"ticketsCreated": t.TicketsCreated, "ticketsUpdated": t.TicketsUpdated,
		"artifacts": t.Artifacts, "skillsCreated": t.SkillsCreated, "skillsUpdated": t.SkillsUpdated,
		"modelSwitches": t.ModelSwitches,
		"promptChars":   t.PromptChars, "promptImages": t.PromptImages, "promptUrls": t.PromptURLs,
	}
}
