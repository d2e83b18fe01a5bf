// Package codex follows Codex CLI rollouts (~/.codex/sessions/**/rollout-*.jsonl,
// and .jsonl.zst) and turns each into neutral, redacted events.
//
// # Forms
//
//   - The {timestamp, type, payload} wrapper of 0.34 to 0.146 (originators
//     codex_cli_rs, codex_exec, codex-tui, Codex Desktop): session_meta,
//     response_item, event_msg, turn_context, compacted, world_state, …
//   - The legacy bare-item JSONL (mid 2025): a header {id, timestamp,
//     instructions, git}, bare ResponseItems, {"record_type":"state"}
//     markers, and no per-line times: records take the last known time (the
//     header's), and latency is unknown.
//   - The oldest single JSON document {session, items}, with Responses or
//     chat-completions items, read by ParseWhole as a token stream.
//   - Any of these compressed with zstd (OpenMaybeZstd).
//
// # Decisions
//
// Session. The first session_meta (or legacy header) defines the session.
// Codex Desktop writes session_meta again on every resume; repeats never
// re-emit or change the session facts. A thread spawned by another
// (source.subagent.thread_spawn, or a parent_thread_id beside a
// source.subagent) has role subagent, its parent's id, and is also lane
// LaneID(id) = "sa-" + the last 12 hex digits of its id (the random part
// of v4 and v7 uuids) in its parent's map. A user fork (forked_from_id
// alone) is a root session of its own. In a subagent thread the
// user_message records are the parent agent's instructions and are not
// user turns.
//
// Replayed history. A fork copies its parent's history into its own
// rollout; a spawned agent (source.subagent.thread_spawn) without
// forked_from_id copies nothing (0.171: forked_from_id absent, no
// fork_context, its first record is its own task_started), and all its
// records count, however fast it works. Copied records yield no events,
// but the model they set and their last cumulative token total carry
// over; that total is the baseline, so the first own total counts only
// its increase over it. A record is copied when
//   - the thread is spawned or forked and the record is stamped before the
//     thread was born (older builds keep the parent's stamps); born is the
//     earlier of its session_meta timestamp and the time in its UUIDv7 id
//     (when they agree within a day); or
//   - it falls in the copy window, which only a fork opens (forked_from_id
//     set: Codex writes it only for a thread built from copied history),
//     or a session_meta of another thread before any record of this one
//     (the copied parent meta that heads a copy). Builds with turn ids
//     (v7, on task_started and turn_context) close the window at the
//     thread's own first turn (a turn id not older than the thread),
//     however long the re-stamped copy burst runs; builds without them
//     close it at the first record stamped after the thread's creation
//     second, so a fork's own first turn inside that second is lost.
//
// A fork that references its parent's history instead of copying it
// starts with its own turn and has no replay; its first total counts only
// its last request (see Tokens).
//
// Tokens. token_count carries the thread's cumulative total_token_usage. A
// response's usage is the delta since the last total of the same counter;
// repeats of a known total (rate-limit refreshes, turn starts) are skipped.
// One rollout can hold several counters: 0.77 restarts from zero after an
// interrupted turn, and a /review thread writes its own counter (from
// zero) before the thread's own resumes where it was. A total continues
// the most recently used counter it does not go below, unless that step is
// larger than one request can be (twice the context window plus output
// room), in which case it continues the nearest counter below it; a total
// below every counter starts a new one (at most four are remembered), and
// counts its last_token_usage when that is below the total (a fork that
// references its parent's history rather than copying it starts from the
// parent's total), else the whole total (a counter from zero). A
// restarted counter that grows past a dead one may be taken for it once,
// an error of about one request. input_tokens includes cached_input_tokens
// and output_tokens includes reasoning: In = input - cached, CR = cached,
// CW = 0, Out = output. Per rollout, the usage of the emitted responses
// sums to the last total minus the baseline where the total only grows,
// and to the last_token_usage of each new total everywhere
// (TestCorpusTokens); summing the raw totals of a rollout with a review
// would count the thread's whole history again.
//
// Responses. One model response is the run of model items (reasoning,
// assistant message, tool calls) between two inputs (a prompt or a tool
// output). Codex spreads a response over several records, and the
// token_count that measures it comes before its items (up to 0.55), right
// after them (0.77) or after the tool outputs (0.140 and later). So each
// record of a response becomes one KindLLM record, all with the response's
// MsgID, placed where the record is: the first one at the response time,
// before the tool calls it requested. A record adds its own facets
// (reasoning: Thinking; a tool call: ToolCalls 1; an assistant message:
// TextChars, in runes); the latency (first record's time minus the time of
// the input before it) and, once the token_count has come, the usage are
// the response's and repeat on each later record, so a merge keeps one
// value per MsgID (take the maximum or the last; never sum usage). A
// token_count with no open response, or one whose usage is already known,
// opens the next response. Rollouts without token counts yield the same
// records with zero usage: one request per response.
//
// Prompts. In the wrapper form the prompt records are the event_msg
// user_message (up to 0.16x) and the event_msg item_completed UserMessage
// item (0.17x writes only this one); the response_item copy also carries
// injected context and never counts. Builds that write both write them
// back to back, before the model answers, so the second of a pair is
// dropped. In the legacy forms, user messages are prompts unless they
// start like Codex's injections (<environment_context>,
// <user_instructions>, # AGENTS.md instructions, <turn_aborted>, …); the
// same test drops such a UserMessage item. The <cwd> of an
// <environment_context> is the legacy form's only working directory. In a
// spawned thread the prompts are the parent agent's instructions and are
// not user turns. /review (entered_review_mode) is one user turn, sized by
// the user's own instructions for a custom review; the prompts Codex
// writes for the review until exited_review_mode are not turns.
//
// Tools. Arguments are decoded into a whitelist of keys (command, cmd,
// workdir, session_id, path, file_path, dir_path, patch input, agent_type,
// server, url); script bodies, stdin and prompts are never decoded. Shell
// commands (shell argv, shell_command, exec_command, local_shell_call,
// end-event argv) go through redact.ParseArgv / ParseShell. apply_patch
// (freeform input, function arguments, or an `apply_patch <<EOF` shell
// script) yields only its file headers: Add (create), Update (modify),
// Delete (delete), Move to (rename-to, the updated file rename-from). A
// call's workdir resolves its relative paths; it does not change the
// session cwd. write_stdin continues the exec_command whose output said
// "Process running with session ID N", and its output confirms what that
// command prints (a PR URL, a commit summary). MCP names: mcp__server__tool,
// server__tool, and namespace mcp__server[__prefix] with the tool name
// (0.17x: namespace mcp__server, bare tool name). Codex's own agent tools
// keep their bare names, namespaced (multi_agent_v1, 0.17x) or not, and
// are never MCP calls: spawn_agent is a subagent call; its result names
// the child lane when its output ({"agent_id", "nickname"}), a
// collab_agent_spawn_end or an item_completed CollabAgentToolCall
// (receiver_thread_ids) gives the thread id, and the lane is declared with
// KindLane; wait_agent, send_input, close_agent and resume_agent are
// tools.
//
// Results. An output is paired with its call by call_id. Only its header is
// read: {"output","metadata":{exit_code,duration_seconds}}, "Exit code: N /
// Wall time: X seconds / Output:", and unified exec's "Chunk ID / Wall time
// / Process exited with code N | Process running with session ID N /
// Original token count / Output:". OutBytes is the byte length of the
// tool's own output (after the header). Outputs starting like Codex's own
// error strings (sandbox denials, rejected patches) are failures; other
// outputs without an exit code have an unknown outcome. exec_command_end,
// patch_apply_end, mcp_tool_call_end, dynamic_tool_call_response and the
// McpToolCall item enrich the open call with the same call_id (exit,
// duration, failure); when no call showed it, the end event alone yields
// the call and its result. A call's result is emitted once: an end event
// after the output adds nothing. 0.17x writes no mcp_tool_call_end: a
// failed MCP call's output is the tool's text with no flag, and only its
// McpToolCall item (status failed, result.isError), written before the
// output, says it failed. exec_command_end's (or the CommandExecution item's) parsed_cmd (Codex's own
// reading of a shell command) gives the result's targets: a file it read
// is a read, a directory it listed or searched a hit; only the kind and
// the path are decoded. A quiet git commit (no "[branch sha]" line) is
// confirmed only by the very next command when it prints HEAD's sha.
// Tokens: input_tokens includes cached reads and, since 2026,
// cache_write_input_tokens; both are taken out of the fresh input.
// session_meta.git gives the cwd's repository (root, name, owner/name
// remote) when the directory is gone.
//
// Errors and turns. event_msg error and stream_error (Retry = the reconnect
// attempt) are llm errors classed from codex_error_info, else by
// redact.APIErrorClass; task_complete with an error too. turn_aborted
// (except review_ended) is an orchestration error, class interrupted.
// task_complete, turn_complete and turn_aborted end a turn (KindTurnEnd).
//
// Names and ids. Tool, namespace, server, subagent type and model names are
// kept only when they are identifier-shaped (a tool name that is not
// becomes "unknown"); call ids are kept as they are unless they are not
// id-shaped, then a hash stands in for them, so pairing still works.
//
// Known and ignored. The top-level token_usage_record (0.17x: per
// response, with the turn's and thread's usage) repeats what the
// token_count after it totals; token_count stays the one source, so the
// counter rules above hold for every build. The envelope's metadata key
// (history_sequence, user_input_order, mcp_attribution, …) and the other
// item_completed items (AgentMessage, Reasoning, FileChange, …) repeat the
// response items and are not read; of CommandExecution only parsed_cmd
// and cwd are (0.17x writes no exec_command_end for unified exec: the
// item, written before the output, is the only record of what a command
// read).
//
// Compaction. A `compacted` item and the context_compacted event that
// follows it are one compaction; remote compaction items count the same.
// Trigger is auto when the model was mid-turn, else manual; PreTokens is
// the context size of the last request.
package codex
