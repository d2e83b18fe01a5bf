// Package cursor turns what Cursor records into neutral, redacted events.
// It reads three surfaces:
//
//   - agent transcripts (~/.cursor/projects/<slug>/agent-transcripts/…jsonl,
//     subagents in <parent>/subagents/<id>.jsonl), line by line with a
//     serialisable carry-state (Parser, Identify, LooksLike);
//   - the IDE's state.vscdb, global and per workspace, of every era
//     (ReadVSCDB, IsVSCDB);
//   - the cursor-agent CLI's store.db (ReadStoreDB, IsStoreDB).
//
// # Decisions
//
// Transcripts carry no time, id, model, usage or tool result. Every event
// has T = 0 and the line order is the order; the session's startedAt and
// duration come from the file's times, given by the caller through
// Parser.SetFile (a changed end time is restated by a KindSession on the
// next line), never invented per event. Each assistant line is one model
// response (KindLLM without model or tokens; text length, thinking, number
// of tool calls) and its tool_use blocks are calls without id and without
// result. A subagent transcript is a lane of its parent's map: Session is
// the parent's transcript id, Lane "sa-" plus the first 12 hex digits of
// the subagent's uuid; the file declares its lane (KindLane, with the
// file's birth time) and never restates the session. Cursor writes nothing
// that links the file to the parent's Subagent call (the call has no id,
// the file names no call), so each Subagent call of a main transcript
// declares a lane of its own (Lane.Launched; call id "launch:<line>:<block>",
// lane "sa-" and 12 hex digits of a SHA-256 of the session and that id),
// with the subagent type; the model it asks for ("fast", or a model name)
// is the call's SubagentModel. The builder lists such a lane, without
// events, when no file is there (a checkpoint copy, a deleted file), and
// when files are, gives them the launches' places in birth order.
//
// cwd: transcript lines have none. The workspace root is recovered
// exactly, not from the lossy slug alone: the first absolute path a line
// names (a read, a patch header, a shell working_directory) that has a
// prefix whose slug equals the project folder's is the root, and becomes
// the resolver's cwd; shell calls' working_directory sets the cwd as well.
// A relative path met before any root is known is resolved by
// redact.Paths with no cwd (it does not invent a root). In state.vscdb the
// cwd is the workspace folder: workspace.json beside a workspace database,
// and for a composer of the global database the folder of the workspace
// (…/workspaceStorage/<hash>/) whose composer index lists it; else the
// first terminal result's resultingWorkingDirectory. In store.db it is the
// root blob's workspace path.
//
// User prompts: Cursor wraps the typed text in <user_query> and adds
// context of its own around it (attached files, external links, skills);
// chars and urls measure the typed part only. A message made only of such
// tagged blocks, with no query, is context and not a prompt. Images count image blocks
// (transcripts, store.db) or a bubble's images (state.vscdb).
//
// state.vscdb: one Conversation per composer with a user or assistant
// bubble (drafts are left out), bubbles in the order of
// fullConversationHeadersOnly (others are stale), or inline. Every
// assistant bubble is a KindLLM record; the records of one model response
// share a MsgID (the id of its first bubble), a response ending where a
// text or thinking bubble follows a tool bubble or a user bubble comes.
// The model is the bubble's, else the one before, else the composer's
// (Cursor's Auto setting, recorded as "default", names no model);
// tokens only when non-zero; latency from timingInfo (settle minus send).
// Times: bubble createdAt, else timingInfo's send time, else the previous
// bubble's; never backwards. A tool bubble is a call (toolCallId, else
// "bubble:<bubbleId>"), and a result once its status is final: error →
// redact.ErrorClass of the error text, cancelled/aborted → interrupted,
// rejected (status, userDecision or result) → permission_denied, a
// non-zero exitCodeV2 → exit_code; running → no result yet. OutBytes is
// the length of the result text. A subagent composer is a conversation of
// its own with Role subagent and its parent composer's id. A composer
// whose status is aborted (or error) ends with an interrupted (or
// api_error) error event: its latest generation was stopped. Workspace
// composers that are index entries only ("type": "head") have their
// content in the global database and are skipped; the legacy chat panel
// gives one conversation per tab.
//
// Privacy: only whitelisted keys of tool inputs are read (paths, the shell
// command for its verb, a URL for its host, the subagent type); text is
// decoded only to be measured or, for a shell's output, to confirm a
// commit or a PR, and is never kept. Error messages name the problem and
// the line number, never the content.
//
// SQLite: databases are opened read-only (mode=ro, query_only), not
// immutable since Cursor is writing them, with a 2 s busy timeout; each
// query is one short read transaction, rows are looked up by key range,
// never by LIKE scans. A locked, half-written or not-yet-complete database
// returns an error wrapping ErrBusy: the caller retries later.
package cursor
