package builder

// The tree functions decide which fields of the Map are written: the format
// page's fields for each part and each event kind, null only where the page
// shows null (agents[].parent of main, session.parentSessionId), optional
// fields omitted when absent.

func (m *Map) tree() map[string]any {
	doc := map[string]any{
		"schema":  m.Schema,
		"session": m.Session.tree(),
		"totals":  m.Totals.tree(),
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
		agents[i] = a.tree()
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
	events := make([]any, len(m.Events))
	for i := range m.Events {
		events[i] = m.Events[i].tree()
	}
	doc["events"] = events
	return doc
}

func (s *Session) tree() map[string]any {
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

func (t *Totals) tree() map[string]any {
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

func (a *Agent) tree() map[string]any {
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

func (e *Event) tree() map[string]any {
	o := map[string]any{"seq": e.Seq, "t": e.T, "kind": e.Kind, "agent": e.Agent, "err": e.Err}
	if e.Task > 0 {
		o["task"] = e.Task
	}
	if e.Model != "" {
		o["model"] = e.Model
	}
	if isCallKind(e.Kind) {
		e.callFields(o)
		return o
	}
	switch e.Kind {
	case "llm":
		o["in"], o["cw"], o["cr"], o["out"] = e.In, e.CW, e.CR, e.Out
		if e.Cost > 0 {
			o["cost"] = e.Cost
		}
		if e.Latency != nil {
			o["latency"] = *e.Latency
		}
		if e.Stop != "" {
			o["stop"] = e.Stop
		}
		o["thinking"], o["toolCalls"], o["textChars"] = e.Thinking, e.ToolCalls, e.TextChars
	case "user":
		o["chars"], o["images"], o["urls"] = e.Chars, e.Images, e.URLs
	case "error":
		o["source"], o["errClass"] = e.Source, e.ErrClass
		setStr(o, "hook", e.Hook)
		setStr(o, "hookEvent", e.HookEvent)
		setStr(o, "srcUuid", e.SrcUUID)
		if e.Ref != nil {
			o["ref"] = *e.Ref
		}
		if e.Retry > 0 {
			o["retry"] = e.Retry
		}
	case "delay":
		o["cause"], o["ms"] = e.Cause, e.Ms
		if e.Ref != nil {
			o["ref"] = *e.Ref
		}
	case "compaction":
		setStr(o, "trigger", e.Trigger)
		o["preTokens"], o["postTokens"], o["ms"] = e.PreTokens, e.PostTokens, e.Ms
	case "commit":
		setStr(o, "repo", e.Repo)
		o["sha"], o["files"], o["ins"], o["del"] = e.SHA, e.Files, e.Ins, e.Del
	case "pr_merge", "pr_close", "pr_comment":
		o["repo"], o["number"] = e.Repo, e.Number
		setStr(o, "url", e.URL)
	case "ticket":
		o["tracker"], o["action"], o["id"] = e.Tracker, e.Action, e.ID
	case "artifact":
		o["url"] = e.URL
		setStr(o, "version", e.Version)
	case "skill_write":
		o["name"], o["action"] = e.Name, e.Action
	case "model_switch":
		o["from"], o["to"] = e.From, e.To
	}
	return o
}

func (e *Event) callFields(o map[string]any) {
	if e.Cat != "" {
		o["cat"] = e.Cat
	}
	switch e.Kind {
	case "mcp":
		o["server"], o["tool"] = e.Server, e.Tool
		e.outAndDur(o)
	case "skill":
		o["skill"] = e.Skill
	case "subagent":
		setStr(o, "subagentType", e.SubagentType)
		setStr(o, "child", e.Child)
	case "web":
		o["host"] = e.Host
	case "tool":
		o["tool"] = e.Tool
	default: // read, search, edit, exec, verify
		o["tool"] = e.Tool
		if e.Kind == "exec" || e.Kind == "verify" {
			setStr(o, "verb", e.Verb)
		}
		targets := make([]any, len(e.Targets))
		for i, t := range e.Targets {
			if t.File < 0 {
				targets[i] = map[string]any{"scope": "outside", "label": t.Label, "touch": t.Touch}
				continue
			}
			to := map[string]any{"file": t.File, "touch": t.Touch}
			setStr(to, "op", t.Op)
			targets[i] = to
		}
		o["targets"] = targets
		e.outAndDur(o)
		if e.VCS != nil {
			v := map[string]any{"provider": e.VCS.Provider, "action": e.VCS.Action}
			setStr(v, "repo", e.VCS.Repo)
			if e.VCS.Number > 0 {
				v["number"] = e.VCS.Number
			}
			o["vcs"] = v
		}
	}
	setStr(o, "errClass", e.ErrClass)
	if e.ExitCode != nil {
		o["exitCode"] = *e.ExitCode
	}
	if e.RetryOf != nil {
		o["retryOf"] = *e.RetryOf
	}
	if e.Attempt > 0 {
		o["attempt"] = e.Attempt
	}
}

func (e *Event) outAndDur(o map[string]any) {
	if e.OutBytes != nil {
		o["outBytes"] = *e.OutBytes
	}
	if e.Dur != nil {
		o["dur"] = *e.Dur
	}
}

func setStr(o map[string]any, key, v string) {
	if v != "" {
		o[key] = v
	}
}
