// Package claude follows Claude Code transcripts (~/.claude/projects/<slug>/
// <session>.jsonl and the subagent files beside them) and turns each line
// into neutral, redacted events for the map builder.
//
// The parser is incremental: Line takes one complete line, State returns the
// carry-state (times, pending call ids, recent response ids, the set of
// repo-relative files touched, the path resolver's state) and Restore
// continues from it, so that a file parsed in pieces across restarts yields
// the same events as one pass.
//
// Nothing from the text of a transcript is kept. Lines are decoded into
// structs that declare only metadata fields; prompt, reply, thinking and
// tool-result texts stay raw JSON and are measured (bytes, runes) without
// being decoded. A text is decoded only to be classified or searched for a
// confirmed identifier (an exit code, a PR URL, a commit sha) and is dropped
// right after. Error messages name the line number, never its content.
//
// How the transcript is read where the format leaves room:
//
//   - Session: one record with NativeID (the file's uuid name, else the
//     sessionId of most lines so far), agent tool claude-code and the CLI
//     version; again when either changes. Subagent files emit it too, with
//     the parent's id, so that a lone subagent file still builds a map.
//   - Responses: one llm record per assistant line. Lines of one response
//     share MsgID (message.id + "/" + requestId) and each carries the usage
//     snapshot written on it; the builder keeps the largest, never a sum.
//     Latency is on the first line of a response only: its time minus the
//     time of the last user or tool-result line. "<synthetic>" lines are
//     not responses: API errors become llm error records, notices nothing.
//   - Calls: every tool_use (and server_tool_use) block. Targets come from
//     file_path, notebook_path, path and, for Glob without a path, the
//     literal directory of the pattern. A Write is a create when the file
//     was not read or edited before in the same file of the log, else a
//     modify; Edit, MultiEdit and NotebookEdit modify. Shell commands
//     contribute the verb, category and VCS facet from redact.ParseShell.
//   - Results: out bytes are the decoded byte length of the result content
//     (text blocks, plus the base64 length of images), or persistedOutputSize
//     when the output went to tool-results/ (the file is never opened).
//     Shell results carry the exit code ("Exit code N" on failures, 0 on a
//     completed foreground success). A user's refusal of a call is
//     permission_denied; other failures are classed by redact.ErrorClass,
//     except that a failed shell call without an exit status (and not one
//     of Claude Code's own <tool_use_error> messages) never ran: a
//     PreToolUse hook blocked it, whatever its message says. A web fetch
//     whose toolUseResult reports an HTTP status of 400 or more failed,
//     though Claude Code hands the error page back as a success
//     (404/410 not_found, 429 rate_limit, 401/403/407 permission_denied,
//     408/504 timeout, else other).
//     A subagent call's result names the lane it started (sa-<agentId>);
//     an Agent or Task call without subagent_type is general-purpose, the
//     tool's default. Its model input (an alias such as haiku, or a model
//     name) is kept as the model the call asks for, only when it looks
//     like a model name. AskUserQuestion and ExitPlanMode wait for the
//     user (Call.AwaitsUser), so their time is no tool delay.
//     PRs and commits are confirmed from the output of gh/glab PR commands
//     and git commit, or from the CLI's own gitOperation record.
//   - Prompts: user lines a person typed. Not prompts: tool results, meta
//     lines, compaction summaries, task and teammate notifications, command
//     output, bash-mode input and output (the user's own shell, not a call),
//     IDE context blocks, anything in a subagent file (its prompt comes from
//     the parent). A slash command is a prompt unless it is a built-in that
//     runs in the CLI only (/clear, /model, /mcp, …); its size is the command
//     and arguments as typed. system/local_command lines repeat it and are
//     skipped.
//   - Interrupt markers ("[Request interrupted by user…]" and kin) are
//     orchestration errors of class interrupted.
//   - Hooks: failed or blocking hooks only (attachment hook errors, async
//     hook responses with a non-zero exit, stop_hook_summary with errors or
//     a prevented continuation); a hook that ran around a tool refers to
//     that call.
//   - Subagents: a subagent file is lane sa-<agentId>, its first record a
//     lane record with the type and launching call from meta.json when the
//     caller passes them (ReadLaneMeta, SetLaneMeta); the parent's call
//     links to the lane through its result either way.
//     Sidechain lines inside a main file are skipped, and so are the lines
//     a forked session copied from its parent (forkedFrom set): the
//     parent's map holds them. A side question's subagent, which replays
//     its parent's messages, is left to the builder, which keeps one copy
//     of a response or call that several lanes hold. A compaction
//     transcript (agent-acompact-*) yields only its billed request, as a
//     side request of the main lane (LLM.Side "compaction"): the compaction
//     itself is the main file's compact_boundary record.
//   - Relayed subagent requests: an agent_progress line in the parent
//     copies a line of the subagent's transcript. Of a copied assistant
//     line with a usage, only the agent id, the message and request ids,
//     the model, the usage and the line's time are read (the content,
//     the prompt and any normalised conversation are stepped over): it
//     becomes an llm record of lane sa-<agentId> marked Relayed, with
//     unknown latency and no text or call counts, after a lane record
//     naming the launching call (parentToolUseID), which links the lane
//     to its call when the call's result does not name the agent (a
//     refused or missing result). The builder counts a relayed copy
//     only when no log of the session holds the response itself, so
//     that a parent whose subagent files are gone (or not written yet)
//     still bills the subagent's requests, and one with them bills them
//     once.
//   - cost-state lines (Claude Code's running total per process and model)
//     become KindClientTotal records; the builder adds what they hold
//     beyond the transcript's requests as auxiliary side requests.
//   - Bookkeeping lines (titles, summaries, last prompt, modes, snapshots,
//     queue operations, pr-link, …) are skipped, as are the other progress
//     lines and informational attachments and system notices; types.go
//     lists every type and subtype with its decision.
package claude
