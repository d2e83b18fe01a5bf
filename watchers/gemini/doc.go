// Package gemini follows Gemini CLI (@google/gemini-cli) chats.
//
// # On-disk format (read from the source of Gemini CLI 0.61.0)
//
// The client's home is $GEMINI_CLI_HOME when set, else the user's home;
// everything is under <home>/.gemini. Each project (working directory) has
// a temp directory tmp/<project>/ named by a short slug (projects.json maps
// project paths to slugs; older clients used the SHA-256 of the path),
// holding .project_root (the project's absolute path, one line) and:
//
//   - chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of the session id>.jsonl:
//     one session (ChatRecordingService). Records are appended, one JSON
//     object a line, never rewritten in place:
//   - the first is the session metadata: sessionId, projectHash,
//     startTime, lastUpdated, kind ("main" or "subagent"), directories;
//   - a message: id, timestamp, type ("user", "gemini", "info", "error",
//     "warning"), content (a string or a list of Gemini API parts),
//     displayContent; a gemini message adds model, thoughts ([{subject,
//     description, timestamp}]), tokens ({input, output, cached,
//     thoughts, tool, total}: promptTokenCount with the cached tokens in
//     it, candidates, cachedContent, thoughts, toolUsePrompt, and the
//     API's total) and toolCalls ([{id, name, args, result (the
//     functionResponse parts sent back), status (success, error,
//     cancelled), timestamp (when it completed), agentId (a subagent's),
//     resultDisplay, description, displayName}]). A message that changes
//     (its tokens arrive, its tool calls complete) is appended again whole
//     under the same id: the last record of an id is the message;
//   - {"$set": {...}}: metadata updates (lastUpdated, summary,
//     directories, memoryScratchpad) and, as {"$set": {"messages": [...]}},
//     a history the client rebuilt itself (its session context at the
//     start, a compressed history);
//   - {"$rewindTo": id}: the user rewound the conversation to before
//     that message.
//     Tool responses go back to the model as a user message whose parts
//     are functionResponse parts: no prompt. A shell command's output ends
//     with "Exit Code: N" (wrapped in <untrusted_context>) when N is not 0;
//     its status is still success. MCP tools are named mcp_<server>_<tool>.
//     Resuming (--resume) appends to the session's file; the client may
//     also start a second file with the same session id holding only the
//     metadata and its session context.
//   - chats/<parent session id>/<agent id>.jsonl: a subagent's
//     conversation (kind "subagent", directories set; the parent's
//     invoke_agent call has its agentId). Its first user message is the
//     parent's instruction; the client adds a user message of its own
//     when the subagent stops without calling complete_task. The result
//     it gives complete_task is its answer: counted as text it wrote
//     (textChars), so that a subagent that finished reads completed.
//   - chats/session-*.json: the form clients before the JSONL move wrote:
//     one JSON document {sessionId, projectHash, startTime, lastUpdated,
//     messages: [...]} rewritten whole at every change. A current client
//     that resumes one converts it to a .jsonl beside it.
//   - logs.json: the prompts typed, for the up-arrow history; nothing the
//     map needs that the chat lacks, so it is not read.
//
// # What the map takes
//
// The JSONL form is tailed like the other agents' logs. The carry-state
// holds, for the latest messages, what was already emitted for them (their
// id, time, token snapshot, text length and the digests of their tool call
// ids), and a short digest of older message ids: a message recorded again
// emits only what it gained, so the daemon's events equal a single pass
// over the finished file whatever restarts happened. A model response is
// an llm event (MsgID = message id; in = input - cached + tool, cr =
// cached, out = output + thoughts, so that the map's tokens equal the
// client's total); every completed tool call is a call and its result.
// Messages of a rebuilt history are remembered, never counted; a rewind
// keeps what the rewound messages cost. The whole-document form is read
// whole at each change and replaces what it gave before; once a .jsonl
// copy of it is beside it (a current client resumed it), only the copy is
// read. A daemon that had read the .json before the copy appeared keeps
// what it gave in its state, and leaves it out of the session's map once
// the copy is there (daemon.twinned), as agentmap build would.
//
// Tools: read_file, read_many_files (read); list_directory, glob,
// grep_search (search, with their directory as a hit); write_file, replace
// (edit; resultDisplay.isNewFile makes it a create); run_shell_command
// (exec or verify by its verb, exit code from its output); google_web_search
// and web_fetch (web: "search", or the host of the first URL it was given);
// activate_skill (skill); invoke_agent and the older per-agent tools
// codebase_investigator, cli_help, generalist (subagent, typed by the
// agent's name); mcp_<server>_<tool>, read_mcp_resource, list_mcp_resources
// (mcp); ask_user and exit_plan_mode (tool, waiting for the user); the
// others (write_todos, save_memory, enter_plan_mode, tracker_*, …) are
// tool. Tool call ids are kept only as digests: the client builds them
// from the model's own ids.
package gemini
