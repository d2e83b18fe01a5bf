// Package opencode reads what OpenCode (the opencode-ai CLI and TUI)
// records of its sessions into neutral, redacted events: its SQLite store,
// and the JSON storage of the versions before it. Both are read whole,
// read-only, whenever they change (watchers.FormSQLite), never tailed.
//
// # Where
//
// OpenCode's data directory is $XDG_DATA_HOME/opencode, else
// ~/.local/share/opencode, on every OS (it uses xdg-basedir). The store is
// opencode.db there; builds of another release channel write
// opencode-<channel>.db; $OPENCODE_DB names another file (absolute, or
// relative to the data directory), whose directory is then a root too
// when the file keeps one of those names (config's default roots; doctor
// warns of another name, which agentmap does not follow, and of
// ":memory:", which leaves nothing on disk).
//
// # The SQLite store (read from OpenCode 1.18.33)
//
// WAL mode, written by drizzle. The tables read:
//
//	session  id, parent_id (a child session started by the task tool), directory (the cwd),
//	         version (of OpenCode), time_created, time_updated (Unix ms), and the session's own
//	         token totals tokens_input, tokens_output, tokens_reasoning, tokens_cache_read,
//	         tokens_cache_write; title, slug, summary_* and share_url are text and never read
//	message  id, session_id, time_created, data: JSON {role: user|assistant, time{created,
//	         completed}, modelID, providerID, path{cwd, root}, tokens{total, input, output,
//	         reasoning, cache{read, write}}, cost, finish (tool-calls|stop|…), error{name,
//	         data{message, statusCode}}, agent, mode}
//	part     id, message_id, session_id, data: JSON {type, …} with type
//	           text       {text, synthetic?, time{start, end}}       (text: measured only)
//	           reasoning  {text, time}                               (thinking: yes/no only)
//	           file       {mime, url, filename}                      (an image counts as one)
//	           tool       {tool, callID, state{status: pending|running|completed|error,
//	                       input{…}, output, error, metadata{exit, sessionId, exists, …},
//	                       title, time{start, end}}}
//	           step-start {snapshot}; step-finish {reason, tokens, cost} (one model request)
//	           patch {hash, files}; compaction {auto}; retry {attempt, error, time{created}};
//	           subtask, agent, snapshot (not used)
//
// Ids (ses_…, msg_…, prt_…) ascend with time, so parts are read in id
// order. Other tables (project, event, todo, permission, session_message,
// …) are not read.
//
// # The JSON storage (versions before the store)
//
// Under <data dir>/storage/, pretty-printed JSON, the layout the current
// client's storage migrations still read:
//
//	session/<project id>/<session id>.json   {id, projectID, parentID?, directory, version, title, time{created, updated}}
//	message/<session id>/<message id>.json   the message's data as above, with id and sessionID
//	part/<message id>/<part id>.json         the part's data as above, with id, messageID and sessionID
//
// A root session's file is the unit read (with its messages, parts and
// child sessions); OpenCode writes messages without touching the session
// file, so the daemon watches the size and time of the session's message
// files as the file's -wal (found at each rescan: storage/message/ is not
// watched). A part rewritten with no message changing after it is seen
// with the next message change; these stores come from versions that no
// longer run (the current client migrates them into its SQLite store),
// so their sessions are finished. The tests build this layout from a store the
// real client wrote; no old client was run.
//
// # Mapping
//
// One map per root session; each child session (parent_id) is a lane of
// it, "sa-" plus the tail of its id, declared with the task call that
// started it (the call's state.metadata.sessionId) and its subagent_type.
// A child session is no map of its own: its work is in its parent's.
//
// Each step (step-start … step-finish) is one model request: tokens from
// step-finish (input excludes the cache reads, as OpenCode counts; output
// and reasoning together are the map's out), text length, thinking, the
// number of tool calls; latency from the request's start (the message's
// creation, or the end of the previous step's tools) to the first part
// the response produced. A message without steps (older versions) is one
// request with the message's tokens. The tokens of a lane equal the
// session's own totals in its session row.
//
// Paths are relative to the project root the assistant messages record
// (path.root, the git worktree), which outlives the directory: with the
// session's directory gone (a deleted worktree, a moved clone, a store
// from another machine) the root is still the repo, named after its
// directory (OpenCode keeps no remote). The root is looked up in the
// session's messages before its directory is set. Root "/" is OpenCode's
// project for a directory outside git: a directory that is gone is then
// not made a repo of its own (redact.Paths.SetCWDNoRepo). project.worktree
// holds the same root and is not read.
//
// Tools: read → read; write (op create when metadata.exists is false),
// edit, multiedit, patch, apply_patch (headers of patchText) → edit; glob,
// grep, list → search (their path); bash → exec or verify with the verb of
// its command (metadata.exit is the exit code; non-zero fails the call);
// webfetch → web (host), websearch and codesearch → web "search"; task →
// subagent; skill → skill; todowrite, todoread, question, lsp, batch,
// plan_* → tool; any other name is an MCP tool <server>_<tool>. A tool in
// state error fails with the class of its error text. Assistant errors:
// MessageAbortedError is an interruption, ProviderAuthError auth, others
// by status and message; retry parts are llm errors with their attempt.
//
// Privacy: text (prompts, replies, reasoning, tool inputs and outputs,
// titles, summaries, error messages) is read only to measure it or to
// find a confirmed PR URL or commit in a shell output, and never kept.
package opencode
