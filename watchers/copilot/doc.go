// Package copilot follows GitHub Copilot CLI (the @github/copilot npm
// package) through the event log it writes for each session, line by line
// with a serialisable carry-state, into neutral, redacted events.
//
// # Where (read from Copilot CLI 1.0.102)
//
// $COPILOT_HOME, else ~/.copilot, holds session-state/<session id>/
// with events.jsonl (the log read here), workspace.yaml, checkpoints/,
// files/ and rewind-file-snapshots/ (not read). A resumed session
// (--resume, --continue) appends to the same events.jsonl. The flat
// layout session-state/<id>.jsonl is taken by path too (the same event
// types are assumed; no such file was seen).
//
// # Records
//
// One JSON object a line: {type, data, id, timestamp (RFC 3339), parentId,
// agentId?}; agentId is set on the records of a subagent. The types read:
//
//	session.start, session.resume  data.sessionId, copilotVersion, selectedModel, context.cwd,
//	                               gitRoot, repository (owner/name), repositoryHost
//	session.model_change           data.newModel
//	user.message                   data.content (measured), attachments[].type/mimeType; a
//	                               subagent's prompt (agentId set, source "agent-…") is no turn
//	session.usage_record           data.usage: model, inputTokens (the whole prompt, cached
//	                               tokens included), outputTokens, cacheReadTokens,
//	                               cacheWriteTokens, duration (ms), apiCallId, finishReason
//	assistant.message              data.apiCallId (joins its usage record), model, content
//	                               (measured), reasoningText / reasoningOpaque (thinking),
//	                               toolRequests (counted)
//	tool.execution_start           data.toolCallId, toolName, arguments (only path, paths,
//	                               command, url, agent_type, model, skill are decoded),
//	                               mcpServerName / mcpToolName when given
//	tool.execution_complete        data.toolCallId, success, result.content (measured),
//	                               error{message, code}, shellExecution.exitCode,
//	                               toolTelemetry.restrictedProperties.agent_id
//	subagent.started               agentId, data.toolCallId (the task call), agentName (type)
//	hook.start, hook.end           data.hookInvocationId (pairs them), hookType (postToolUse, …),
//	                               input.toolName; hook.end success and error (text, not read). A
//	                               postToolUse hook runs between its call's start and complete
//	                               records; a failed one is a hook_error of source hook named
//	                               <hookType>:<tool>, referring to that call
//	session.error, abort           an llm error by its type and message; an interruption
//	session.compaction_complete    data.preCompactionTokens, postCompactionTokens
//	session.truncation             old messages dropped to fit the window, no summary: an
//	                               auto compaction of data.preTruncationTokensInMessages →
//	                               postTruncationTokensInMessages; none when
//	                               tokens/messagesRemovedDuringTruncation are both 0
//	skill.invoked                  data.name, trigger: user-invoked (a skill the user typed,
//	                               which no skill call shows) is a skill call without id;
//	                               agent-invoked (the skill tool's own) and context-load add
//	                               nothing; content, description not read
//	subagent.failed                data.toolCallId: the task call fails (subagent_failed),
//	                               when it completes or, already completed, by a later
//	                               failed result; error (text) not read
//	session.shutdown               the end of a run (a turn end); its modelMetrics are the
//	                               client's own cumulative accounting, which tests hold the
//	                               maps to (input plus output tokens)
//
// Not read: system.message (the system prompt), assistant.turn_start /
// turn_end (one per model call), subagent.configured / selected /
// completed, session.usage_record fields beyond the above.
//
// session.truncation, the user-invoked skill.invoked and subagent.failed
// are read as Copilot CLI 1.0.102's event schema gives them
// (copilot-sdk/generated/session-events.d.ts); the suite's sessions make
// the client write none of them.
//
// # Mapping
//
// One map per events.jsonl; its subagents are lanes ("sa-" plus the tail
// of agentId) declared by subagent.started with the task call that
// launched them. A usage record and its assistant.message are one request
// (MsgID apiCallId): in = inputTokens − cacheRead − cacheWrite, so the
// map's tokens equal Copilot's inputTokens + outputTokens.
//
// Paths are relative to the repository context.gitRoot names, which
// outlives the directory: with the directory gone (a deleted worktree, a
// moved clone, a log from another machine) the root is still the repo,
// named and with its owner/name remote from context.repository as Codex's
// are, or after the root's directory without one. A context without
// gitRoot says the cwd was in no repository: a cwd that is gone is then
// not made a repo of its own (redact.Paths.SetCWDNoRepo).
//
// Tools: view → read; create (op create), edit, str_replace_editor,
// apply_patch → edit; grep, glob, lsp → search (path, or the first of
// paths); bash, powershell → exec or verify with the verb of the command
// (a non-zero shellExecution.exitCode fails the call); web_fetch, fetch →
// web (host), web_search → web "search"; task → subagent (agent_type);
// skill → skill; read_/write_/stop_/list_bash and their powershell twins,
// sql, read_agent, list_agents, write_agent and any other → tool
// (ask_user, exit_plan_mode wait for the user); MCP tools by
// mcpServerName/mcpToolName or a <server>/<tool> name. A failed call is
// classed by its error text (code denied/rejected: permission_denied).
//
// Privacy: text is read only to measure it or to find a confirmed PR URL
// or commit in a shell output, never kept; the carry-state holds ids,
// call kinds and the path resolver's state.
package copilot
