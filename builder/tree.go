package builder

// The session and totals blocks, written once per map, are built as trees
// for CanonicalJSON: the format page's fields, null only where the page
// shows null (session.parentSessionId). The list parts are appended by hand
// (encode.go).

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
