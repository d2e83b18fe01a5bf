package codex

import (
	"encoding/json"

	"github.com/agentmap/agentmap/builder/event"
)

// stateVersion changes when the carry-state layout changes incompatibly.
const stateVersion = 1

// maxDone bounds the ids of completed calls kept to drop late duplicates
// (an event_msg *_end after the output item of the same call).
const maxDone = 64

// state is the carry-state: everything the parser remembers between lines.
// It holds ids, counters, numbers, tool names and the path resolver's own
// state; never text from the log.
type state struct {
	V    int    `json:"v"`
	N    int64  `json:"n,omitempty"`    // records seen (for error messages)
	Form string `json:"form,omitempty"` // wrapper or legacy, from the first record
	T    int64  `json:"t,omitempty"`    // last known time, Unix ms

	ID   string `json:"id,omitempty"`   // native id from the first session_meta or header
	Meta bool   `json:"meta,omitempty"` // the first session_meta or header was read
	Sent bool   `json:"sent,omitempty"` // KindSession emitted
	Sub  bool   `json:"sub,omitempty"`  // a subagent thread: its prompts come from the parent
	// Review is set between entered_review_mode and exited_review_mode,
	// where the prompts are the review instructions Codex writes.
	Review bool `json:"review,omitempty"`

	// Replay is set while a forked thread's copy of its parent's history
	// may still be read (see doc.go, Replayed history): without turn ids,
	// records stamped before it (Unix ms) belong to that copy.
	Replay int64 `json:"replay,omitempty"`
	// Born is the thread's creation (Unix ms): turns started before it
	// are copied ones, and so are the records of a spawned or forked thread
	// stamped before it (Kin). ReplayIDs is set once a copied record
	// carried a turn id, after which only a turn of the thread's own ends
	// the copy.
	Born      int64 `json:"born,omitempty"`
	Kin       bool  `json:"kin,omitempty"`
	ReplayIDs bool  `json:"rids,omitempty"`
	// Began is set at the first record after the first session_meta; a
	// foreign session_meta before it starts a copied history.
	Began bool `json:"began,omitempty"`
	// Prompt is the kind of record ("event" for user_message, "item" for
	// an item_completed UserMessage) that counted the last prompt, until
	// the next model output: the other kind of record describes the same
	// prompt.
	Prompt string `json:"pr,omitempty"`

	Model     string `json:"model,omitempty"`
	ModelSent string `json:"msent,omitempty"`
	HasCWD    bool   `json:"cwd,omitempty"`

	// Counters are the cumulative token counters seen, most recently used
	// last: the thread's own, and others that write into the same rollout
	// (a /review thread counts from zero, then the thread's own resumes).
	Counters []tokenUsage `json:"tok,omitempty"`
	LastCtx  int64        `json:"ctx,omitempty"` // context size of the last request

	Resp   *response `json:"resp,omitempty"`
	RespN  int       `json:"rn,omitempty"`
	InputT int64     `json:"inT,omitempty"` // time of the last input (prompt or tool output)

	Calls map[string]*call `json:"calls,omitempty"` // open calls by call_id
	Done  []string         `json:"done,omitempty"`  // recently completed call ids
	// Exec maps a unified-exec process (session id) to the exec_command call
	// that started it, so that write_stdin calls continue that call.
	Exec map[string]process `json:"exec,omitempty"`
	// Lanes are the lanes declared, with the subagent type and model given.
	Lanes map[string]string `json:"lanes,omitempty"`

	// Compact is the kind of the last compaction record ("item" or
	// "event") until the next model output or prompt, so that the item and
	// the event of one compaction count once.
	Compact  string `json:"cmp,omitempty"`
	TurnResp bool   `json:"tr,omitempty"` // a response since the last prompt

	Paths json.RawMessage `json:"paths,omitempty"`
}

// response is the model response being read. Codex splits a response over
// several records (reasoning, message, calls, and a token_count before or
// after them, depending on the version); each becomes one KindLLM record
// with the response's MsgID.
type response struct {
	ID    string      `json:"id"`
	T     int64       `json:"t"`
	Lat   int64       `json:"lat"`
	Usage *tokenDelta `json:"u,omitempty"`
	Input bool        `json:"in,omitempty"` // an input followed the response's items
}

type tokenDelta struct {
	In  int64 `json:"in"`
	CW  int64 `json:"cw,omitempty"`
	CR  int64 `json:"cr"`
	Out int64 `json:"out"`
}

// call is an open tool call, waiting for its output.
type call struct {
	Tool   string    `json:"tool"`
	Class  string    `json:"class,omitempty"` // patch, exec, stdin, spawn, mcp
	PR     string    `json:"pr,omitempty"`    // action for ConfirmPR
	Commit bool      `json:"commit,omitempty"`
	End    *endFacts `json:"end,omitempty"` // from an event_msg *_end before the output
	Lane   string    `json:"lane,omitempty"`
	Sess   string    `json:"sess,omitempty"` // write_stdin: the exec session it feeds
	SAType string    `json:"sat,omitempty"`  // spawn: the subagent type asked for
	T      int64     `json:"t,omitempty"`
}

// process is a unified-exec process still running: the exec_command call
// that started it, and what its output may confirm.
type process struct {
	Call   string `json:"call"`
	PR     string `json:"pr,omitempty"`
	Commit bool   `json:"commit,omitempty"`
}

// maxProcs bounds the running processes remembered.
const maxProcs = 64

// endFacts is what an event_msg *_end said about a call.
type endFacts struct {
	Exit  *int   `json:"exit,omitempty"`
	Dur   int64  `json:"dur,omitempty"`
	Err   bool   `json:"err,omitempty"`
	Class string `json:"class,omitempty"`
	Out   int64  `json:"out,omitempty"`
	// Tg are the targets parsed_cmd names, for the call's result.
	Tg []event.Target `json:"tg,omitempty"`
}
