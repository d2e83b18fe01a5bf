// Package event defines the neutral, redacted records that agent parsers emit
// and the map builder consumes. It is the only vocabulary shared by the
// watchers and the builder, and the unit the daemon stores in its state
// database.
//
// Privacy: nothing in this package can hold free text. Every string field is
// an identifier (tool, model, server, skill, subagent type, host, verb, id), a
// repo-relative path, or a bucket label produced by builder/redact. Lengths
// and counts stand in for text. A parser that fills a field with anything
// else breaks the redaction contract.
package event

// Kind says what a record describes.
type Kind string

const (
	// KindSession carries session-level facts (ids, role, parent).
	KindSession Kind = "session"
	// KindRepo declares a repository that later targets refer to by key.
	KindRepo Kind = "repo"
	// KindModel says which model drives a lane from this point on
	// (Codex turn_context, Cursor bubble model). The builder derives
	// model_switch events from changes.
	KindModel Kind = "model"
	// KindUser is a real user prompt (never a tool result, summary or meta line).
	KindUser Kind = "user"
	// KindLLM is one model response, or one line of a response that the
	// source splits over several lines (Claude). Records that share MsgID
	// are one request; the builder merges them.
	KindLLM Kind = "llm"
	// KindCall is a tool call as requested by the model.
	KindCall Kind = "call"
	// KindResult completes the call with the same CallID.
	KindResult Kind = "result"
	// KindError is a failure not tied to one tool call (API error, hook
	// failure, interrupt).
	KindError Kind = "error"
	// KindCompaction is a context compaction.
	KindCompaction Kind = "compaction"
	// KindLane declares a subagent lane (its type, model and launching call).
	KindLane Kind = "lane"
	// KindTurnEnd marks the end of an agent turn (Claude turn_duration, Codex
	// task_complete, Cursor turn_ended). It feeds end detection and stall
	// logic; it never becomes a map event.
	KindTurnEnd Kind = "turn_end"
	// KindEnd is an explicit end of the session (archive move, deleted file).
	KindEnd Kind = "end"
	// KindClientTotal is the client's own running total of what a process
	// of the session was billed (Claude Code's cost-state). The builder
	// adds the requests it holds that no transcript line shows (the
	// client's auxiliary requests) as side requests; it never becomes a
	// map event of its own.
	KindClientTotal Kind = "client_total"
)

// Event is one neutral record. Fields that do not apply to the kind stay
// zero and are omitted when stored. T is Unix milliseconds; 0 means the
// source has no time for it (Cursor transcripts).
type Event struct {
	Kind  Kind   `json:"k"`
	T     int64  `json:"t,omitempty"`
	Agent string `json:"a,omitempty"` // lane id; "" is the main lane

	Session *Session     `json:"s,omitempty"`
	Repo    *Repo        `json:"r,omitempty"`
	Model   string       `json:"m,omitempty"` // KindModel, KindLLM, KindLane
	User    *User        `json:"u,omitempty"`
	LLM     *LLM         `json:"l,omitempty"`
	Call    *Call        `json:"c,omitempty"`
	Result  *Result      `json:"x,omitempty"`
	Error   *Error       `json:"e,omitempty"`
	Compact *Compaction  `json:"p,omitempty"`
	Lane    *Lane        `json:"n,omitempty"`
	Total   *ClientTotal `json:"ct,omitempty"`
}

// ClientTotal is a client's cumulative usage for one process of a session
// (a resumed session may continue the same process's totals).
type ClientTotal struct {
	// Process identifies the process the totals count from (Claude Code's
	// startTime, Unix ms).
	Process int64        `json:"proc"`
	Models  []ModelTotal `json:"models"`
	CostUSD float64      `json:"usd,omitempty"`
}

// ModelTotal is one model's part of a ClientTotal, split like LLM usage.
type ModelTotal struct {
	Model string `json:"m"`
	In    int64  `json:"in,omitempty"`
	CW    int64  `json:"cw,omitempty"`
	CW1h  int64  `json:"cw1h,omitempty"`
	CR    int64  `json:"cr,omitempty"`
	Out   int64  `json:"out,omitempty"`
}

// Session holds what identifies a session. A parser emits it once, when it
// first knows the facts, and again only if they change (a later line gives
// the parent id).
type Session struct {
	NativeID  string `json:"id,omitempty"`
	AgentTool string `json:"tool,omitempty"` // claude-code, codex, cursor
	// Role is root or subagent (a Codex child rollout seen as its own session).
	Role string `json:"role,omitempty"`
	// ParentNativeID is the native id of the parent session, for subagent roles.
	ParentNativeID string `json:"parent,omitempty"`
	// AgentVersion is the version of the agent CLI that wrote the log.
	AgentVersion string `json:"ver,omitempty"`
	// StartT and EndT bound the session in Unix ms when the records carry
	// no times of their own (Cursor transcripts: the file's times). The
	// builder uses them for startedAt and durationMs only.
	StartT int64 `json:"st,omitempty"`
	EndT   int64 `json:"et,omitempty"`
}

// Repo declares a repository. Key is an opaque, stable id (a hash of the
// root path); the root path itself is never stored.
type Repo struct {
	Key    string `json:"key"`
	Name   string `json:"name"`
	Remote string `json:"remote,omitempty"` // owner/name, no host or credentials
}

// User is the shape of a real prompt.
type User struct {
	Chars  int `json:"chars"`
	Images int `json:"images,omitempty"`
	URLs   int `json:"urls,omitempty"`
}

// LLM is the metadata of one model response (or one line of it).
type LLM struct {
	// MsgID groups the lines of one response (Claude message.id + requestId).
	// Empty means the record is a whole response on its own.
	MsgID string `json:"id,omitempty"`
	// Token counts, split so that none is counted twice: In is fresh input,
	// CW cache writes, CR cache reads, Out output including reasoning.
	In  int64 `json:"in,omitempty"`
	CW  int64 `json:"cw,omitempty"`
	CR  int64 `json:"cr,omitempty"`
	Out int64 `json:"out,omitempty"`
	// CW1h is the part of CW written to a 1-hour cache (Claude
	// usage.cache_creation.ephemeral_1h_input_tokens), billed at a higher
	// rate than the 5-minute writes.
	CW1h int64 `json:"cw1h,omitempty"`
	// Fast marks a response served in fast mode (billed at a multiple).
	Fast bool `json:"fast,omitempty"`
	// Side marks a billed request outside the conversation's flow: the
	// request that wrote a compaction's summary ("compaction"), or one
	// the client made for itself (an "auxiliary" page summary on a small
	// model). It counts in requests, tokens and cost, but it drives no
	// model switch, is no sign that the agent went on, and takes no part
	// in stalls.
	Side string `json:"side,omitempty"`
	// Relayed marks a copy of a lane's response that another log relayed
	// (Claude Code writes a subagent's responses into its parent's
	// transcript as well as into the subagent's own file). It counts only
	// when no log of the session holds the response itself: the copy
	// stands in for a lane file that is gone or not written yet.
	Relayed bool `json:"relay,omitempty"`
	// LatencyMs is the response time minus the time of the input that
	// triggered it; -1 when unknown.
	LatencyMs int64  `json:"lat,omitempty"`
	Stop      string `json:"stop,omitempty"`
	Thinking  bool   `json:"think,omitempty"`
	// ToolCalls and TextChars are per record; the builder sums them over the
	// records of one MsgID.
	ToolCalls int `json:"tools,omitempty"`
	TextChars int `json:"text,omitempty"`
}

// Usage is the total of the token counts.
func (l *LLM) Usage() int64 { return l.In + l.CW + l.CR + l.Out }

// Target is one thing a tool touched: a repo-relative file (Repo + Path) or
// a bucket outside any repo (Label).
type Target struct {
	Repo  string `json:"repo,omitempty"` // Repo.Key
	Path  string `json:"path,omitempty"` // repo-relative, forward slashes
	Label string `json:"label,omitempty"`
	Touch string `json:"touch"`        // hit, read, edit
	Op    string `json:"op,omitempty"` // create, modify, delete, rename-from, rename-to
}

// Call is a tool call. Kind is the map event kind the call becomes (read,
// search, edit, exec, verify, mcp, skill, subagent, web, tool).
type Call struct {
	ID   string `json:"id,omitempty"` // pairs the call with its Result
	Tool string `json:"tool"`         // the tool's own name (Bash, exec_command, …)
	Kind string `json:"kind"`
	Cat  string `json:"cat,omitempty"`
	// Verb is the shell verb (program plus subcommand), exec/verify only.
	Verb    string   `json:"verb,omitempty"`
	Targets []Target `json:"tg,omitempty"`
	// VCS describes a version-control operation (git, gh, glab).
	VCS *VCS `json:"vcs,omitempty"`

	Server       string `json:"srv,omitempty"`   // mcp
	MCPTool      string `json:"mtool,omitempty"` // mcp
	Skill        string `json:"skill,omitempty"` // skill
	SubagentType string `json:"satype,omitempty"`
	// SubagentModel is the model a subagent call asks for (a model name or
	// an alias such as "haiku"), when it names one.
	SubagentModel string `json:"samodel,omitempty"`
	// Host is the web host, or "search" for a web search.
	Host string `json:"host,omitempty"`
	// SkillWrite names a skill whose definition file this call writes.
	SkillWrite string `json:"skw,omitempty"`
	// AwaitsUser marks a tool whose purpose is to wait for the user (a
	// question, a plan to approve): its duration is the user's, no delay.
	AwaitsUser bool `json:"awu,omitempty"`
	// Continues is the CallID of an earlier call this one continues (Codex
	// write_stdin); the builder folds it into that call.
	Continues string `json:"cont,omitempty"`
}

// VCS is the version-control facet of a shell call.
type VCS struct {
	Provider string `json:"provider"` // git, github, gitlab, bitbucket
	Action   string `json:"action"`   // git subcommand, or <noun>_<verb> for gh/glab
	Repo     string `json:"repo,omitempty"`
	Number   int    `json:"number,omitempty"`
}

// Result completes a call.
type Result struct {
	CallID   string `json:"id"`
	Err      bool   `json:"err,omitempty"`
	ErrClass string `json:"class,omitempty"`
	ExitCode *int   `json:"exit,omitempty"`
	OutBytes int64  `json:"out,omitempty"`
	// DurMs is the tool's own duration when the source reports it; -1 or 0
	// means the builder uses the time between call and result.
	DurMs int64 `json:"dur,omitempty"`
	// Child is the lane id a subagent call started.
	Child string `json:"child,omitempty"`
	// Targets are what the call touched as its result tells (Codex
	// exec_command_end parsed_cmd: the files a shell command read, the
	// directories it listed or searched); the builder adds them to the
	// call's own targets.
	Targets []Target `json:"tg,omitempty"`
	// Confirmed outputs, parsed from the result text and reduced to ids.
	PR       *PR       `json:"pr,omitempty"`
	Commit   *Commit   `json:"commit,omitempty"`
	Ticket   *Ticket   `json:"ticket,omitempty"`
	Artifact *Artifact `json:"art,omitempty"`
}

// PR is a pull or merge request confirmed by a tool result.
type PR struct {
	Action   string `json:"action"` // create, merge, close, comment
	Provider string `json:"provider"`
	Repo     string `json:"repo"`
	Number   int    `json:"number"`
	URL      string `json:"url,omitempty"`
}

// Commit is a commit confirmed by git's own summary lines.
type Commit struct {
	Repo string `json:"repo,omitempty"` // Repo.Key
	// Of is the call that made the commit when a later command confirmed
	// it (a quiet git commit, whose sha the next git log prints); "" means
	// the result's own call.
	Of    string `json:"of,omitempty"`
	SHA   string `json:"sha"`
	Files int    `json:"files,omitempty"`
	Ins   int    `json:"ins,omitempty"`
	Del   int    `json:"del,omitempty"`
}

// Ticket is an issue-tracker change confirmed by a tool result.
type Ticket struct {
	Tracker string `json:"tracker"`
	Action  string `json:"action"` // create, update
	ID      string `json:"id"`
}

// Artifact is a published artifact confirmed by a tool result.
type Artifact struct {
	URL     string `json:"url"`
	Version string `json:"version,omitempty"`
}

// Error is a failure that is not one tool call's result.
type Error struct {
	Source    string `json:"src"`   // llm, hook, orchestration
	Class     string `json:"class"` // rate_limit, overloaded, hook_error, interrupted, …
	Hook      string `json:"hook,omitempty"`
	HookEvent string `json:"hookEvent,omitempty"`
	SrcUUID   string `json:"uuid,omitempty"`
	// RefCallID is the call the error belongs to (a hook after a tool).
	RefCallID string `json:"ref,omitempty"`
	Retry     int    `json:"retry,omitempty"`
}

// Compaction is a context compaction.
type Compaction struct {
	Trigger    string `json:"trigger,omitempty"` // auto, manual
	PreTokens  int64  `json:"pre,omitempty"`
	PostTokens int64  `json:"post,omitempty"`
	Ms         int64  `json:"ms,omitempty"`
}

// Lane declares a subagent lane. The lane id is Event.Agent.
type Lane struct {
	SubagentType string `json:"type,omitempty"`
	// LaunchCallID is the parent's call that started the lane, when known.
	LaunchCallID string `json:"launch,omitempty"`
	// Launched marks a lane that the parent's launching call declares, not
	// the lane's own log (a Cursor transcript names no id of the
	// subagent's file): the lane is listed even when no log of its own
	// brings an event, and a lane whose log names no launch takes its
	// place instead (see LogStartMs).
	Launched bool `json:"launched,omitempty"`
	// LogStartMs is when the lane's own log began (its file's birth time,
	// Unix ms), on a lane whose log names no launch: such lanes take the
	// places of Launched lanes in this order, then by id.
	LogStartMs int64 `json:"logst,omitempty"`
}
