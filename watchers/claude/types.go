package claude

// Record types of a Claude Code transcript. The conversation types are
// parsed; the rest are bookkeeping lines (titles, modes, snapshots, queue
// operations, links) that hold nothing a map may keep beyond what the
// conversation lines already give, and are skipped on purpose. A type not in
// either list is skipped too (the format drifts), but tests over real logs
// fail on it so that new types get a decision.
var parsedTypes = map[string]bool{
	"user":       true,
	"assistant":  true,
	"system":     true,
	"attachment": true,
	"progress":   true,
}

var ignoredTypes = map[string]bool{
	"summary":               true, // legacy title: text
	"custom-title":          true, // text
	"ai-title":              true, // text
	"last-prompt":           true, // text
	"tag":                   true,
	"agent-name":            true,
	"agent-color":           true,
	"agent-setting":         true,
	"mode":                  true,
	"permission-mode":       true,
	"repl-mode":             true,
	"worktree-state":        true,
	"pr-link":               true, // PRs come from confirming tool results only
	"frame-link":            true,
	"relocated":             true,
	"continued-in":          true,
	"file-history-snapshot": true, // edit backups; the tool calls already name the files
	"queue-operation":       true, // queued prompts: text, and the prompt itself follows as a user line
	"content-replacement":   true,
	"tools-used":            true,
	"atis-latch":            true,
	"history-suppression":   true,
	"data-flow-records":     true,
	"data-flow-incomplete":  true,
	"derived-from":          true,
	"hybrid-organization":   true,
	"session-owner":         true,
}

// knownType reports whether a record type has a decision in this package:
// parsed, or deliberately ignored.
func knownType(t string) bool { return parsedTypes[t] || ignoredTypes[t] }

// Subtypes of system lines, attachments and progress lines, each with its
// decision. Those marked false are read and deliberately yield nothing.
var systemSubtypes = map[string]bool{
	"compact_boundary":       true,
	"api_error":              true,
	"turn_duration":          true,
	"stop_hook_summary":      true, // when a hook failed or blocked
	"model_refusal_fallback": true,

	"local_command":             false, // the slash command's user line counts
	"informational":             false,
	"away_summary":              false, // text
	"model_fallback":            false, // the llm records show the model used
	"model_refusal_no_fallback": false,
	"model_consent_fallback":    false,
	"api_refusal":               false,
	"memory_saved":              false,
	"agents_killed":             false,
	"scheduled_task_fire":       false,
	"cloud_session_status":      false,
	"file_snapshot":             false,
	"rewind_stand_in":           false,
	"session_start":             false,
}

var attachmentTypes = map[string]bool{
	"hook_non_blocking_error":     true,
	"hook_error_during_execution": true,
	"hook_blocking_error":         true,
	"hook_stopped_continuation":   true,
	"async_hook_response":         true, // when its exit code is not 0

	"hook_success":             false,
	"hook_cancelled":           false, // cancelled by the user or a timeout of the turn, not a failure of the hook
	"hook_additional_context":  false,
	"hook_system_message":      false,
	"output_style":             false,
	"todo_reminder":            false,
	"task_reminder":            false,
	"queued_command":           false, // the prompt follows as a user line
	"skill_listing":            false,
	"file":                     false,
	"edited_text_file":         false,
	"nested_memory":            false,
	"deferred_tools_delta":     false,
	"mcp_instructions_delta":   false,
	"compact_file_reference":   false,
	"command_permissions":      false,
	"plan_mode":                false,
	"plan_mode_exit":           false,
	"plan_mode_reentry":        false,
	"plan_file_reference":      false,
	"agent_listing_delta":      false,
	"diagnostics":              false,
	"auto_mode":                false,
	"task_status":              false,
	"critical_system_reminder": false,
	"selected_lines_in_ide":    false,
	"opened_file_in_ide":       false,
	"invoked_skills":           false,
}

// Progress lines stream what tools, hooks and subagents are doing; the
// results and the subagent's own file carry what a map needs. A
// subagent's progress relays its transcript's lines: its responses are
// read for their requests (progress.go), which count where the subagent's
// own file does not hold them.
var progressTypes = map[string]bool{
	"hook_progress":           false,
	"bash_progress":           false,
	"powershell_progress":     false,
	"agent_progress":          true,
	"mcp_progress":            false,
	"query_update":            false,
	"search_results_received": false,
	"waiting_for_task":        false,
}
