// Package mapfile reads agentplay/v1 session maps as the exporters need
// them: a read-only view of the fields they convert, decoded from the map
// files themselves so that any producer's maps can be exported, plus the
// canonical bytes for the formats that carry whole maps.
package mapfile

import "strings"

// Map is the part of an agentplay/v1 map the exporters read. Unknown fields
// are ignored, as the format page asks of readers.
type Map struct {
	Schema      string  `json:"schema"`
	ContentHash string  `json:"contentHash"`
	Session     Session `json:"session"`
	Totals      Totals  `json:"totals"`
	Repos       []Repo  `json:"repos"`
	Files       []File  `json:"files"`
	Agents      []Agent `json:"agents"`
	Tasks       []Task  `json:"tasks"`
	PRs         []PR    `json:"prs"`
	Events      []Event `json:"events"`
}

// Session is the session block.
type Session struct {
	ID              string   `json:"id"`
	AgentTool       string   `json:"agentTool"`
	CLIVersion      string   `json:"cliVersion"`
	StartedAt       string   `json:"startedAt"`
	DurationMs      int64    `json:"durationMs"`
	Models          []string `json:"models"`
	PathMode        string   `json:"pathMode"`
	Truncated       bool     `json:"truncated"`
	Outcome         string   `json:"outcome"`
	Role            string   `json:"role"`
	ParentSessionID string   `json:"parentSessionId"`
}

// NativeID is the agent's own session id: session.id without the
// "local:<agentTool>:" prefix agentmap writes.
func (s Session) NativeID() string {
	if rest, ok := strings.CutPrefix(s.ID, "local:"); ok {
		if i := strings.IndexByte(rest, ':'); i >= 0 {
			return rest[i+1:]
		}
	}
	return s.ID
}

// Totals are the counters the exporters summarise.
type Totals struct {
	Calls        int     `json:"calls"`
	Requests     int     `json:"requests"`
	UserTurns    int     `json:"userTurns"`
	Subagents    int     `json:"subagents"`
	Errors       int     `json:"errors"`
	Tokens       int64   `json:"tokens"`
	CostUSD      float64 `json:"costUsd"`
	FilesTouched int     `json:"filesTouched"`
	OutputTokens int64   `json:"outputTokens"`
	Commits      int     `json:"commits"`
	PRsCreated   int     `json:"prsCreated"`

	ErrorsBySource map[string]int `json:"errorsBySource"`
	ErrorsByClass  map[string]int `json:"errorsByClass"`
	Retries        int            `json:"retries"`
	Delays         int            `json:"delays"`
	DelayMs        int64          `json:"delayMs"`
	MaxContext     int64          `json:"maxContext"`
	Compactions    int            `json:"compactions"`
	LLMLatencyP50  int64          `json:"llmLatencyP50"`
	LLMLatencyP95  int64          `json:"llmLatencyP95"`
}

// Repo is one repos[] entry.
type Repo struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Remote string `json:"remote"`
}

// File is one files[] entry; Path is already rendered in the map's path mode.
type File struct {
	ID    int    `json:"id"`
	Repo  string `json:"repo"`
	Path  string `json:"path"`
	Reads int    `json:"reads"`
	Edits int    `json:"edits"`
	Hits  int    `json:"hits"`
	Op    string `json:"op"`
}

// Agent is one agents[] entry (the main agent or a subagent lane).
type Agent struct {
	ID           string  `json:"id"`
	Parent       string  `json:"parent"`
	Kind         string  `json:"kind"`
	SubagentType string  `json:"subagentType"`
	Model        string  `json:"model"`
	LaunchSeq    *int    `json:"launchSeq"`
	Start        int64   `json:"start"`
	End          int64   `json:"end"`
	Calls        int     `json:"calls"`
	Requests     int     `json:"requests"`
	Tokens       int64   `json:"tokens"`
	Cost         float64 `json:"cost"`
	Outcome      string  `json:"outcome"`
}

// Task is one tasks[] entry.
type Task struct {
	N        int    `json:"n"`
	Name     string `json:"name"`
	Source   string `json:"source"`
	StartSeq int    `json:"startSeq"`
	EndSeq   int    `json:"endSeq"`
	StartT   int64  `json:"startT"`
	EndT     int64  `json:"endT"`
}

// PR is one prs[] entry.
type PR struct {
	Provider string `json:"provider"`
	Repo     string `json:"repo"`
	Number   int    `json:"number"`
	Seq      int    `json:"seq"`
	State    string `json:"state"`
}

// Target is one targets[] entry: a file (File set) or an outside bucket.
type Target struct {
	File  *int   `json:"file"`
	Scope string `json:"scope"`
	Label string `json:"label"`
	Touch string `json:"touch"`
	Op    string `json:"op"`
}

// VCS is an event's vcs facet.
type VCS struct {
	Provider string `json:"provider"`
	Action   string `json:"action"`
	Repo     string `json:"repo"`
	Number   int    `json:"number"`
}

// Event is one events[] entry. The opaque srcUuid of error events is
// deliberately not read: it only means something on the recording machine.
type Event struct {
	Seq   int    `json:"seq"`
	T     int64  `json:"t"`
	Kind  string `json:"kind"`
	Agent string `json:"agent"`
	Err   bool   `json:"err"`
	Task  int    `json:"task"`
	Model string `json:"model"`
	Cat   string `json:"cat"`

	Tool         string   `json:"tool"`
	Verb         string   `json:"verb"`
	Targets      []Target `json:"targets"`
	OutBytes     *int64   `json:"outBytes"`
	Dur          *int64   `json:"dur"`
	VCS          *VCS     `json:"vcs"`
	Server       string   `json:"server"`
	Skill        string   `json:"skill"`
	SubagentType string   `json:"subagentType"`
	Child        string   `json:"child"`
	Host         string   `json:"host"`
	ErrClass     string   `json:"errClass"`
	ExitCode     *int     `json:"exitCode"`
	RetryOf      *int     `json:"retryOf"`
	Attempt      int      `json:"attempt"`

	In        int64   `json:"in"`
	CW        int64   `json:"cw"`
	CR        int64   `json:"cr"`
	Out       int64   `json:"out"`
	Cost      float64 `json:"cost"`
	Latency   *int64  `json:"latency"`
	Stop      string  `json:"stop"`
	Thinking  bool    `json:"thinking"`
	ToolCalls int     `json:"toolCalls"`
	TextChars int     `json:"textChars"`

	Chars  int `json:"chars"`
	Images int `json:"images"`
	URLs   int `json:"urls"`

	Source    string `json:"source"`
	Hook      string `json:"hook"`
	HookEvent string `json:"hookEvent"`
	Ref       *int   `json:"ref"`
	Retry     int    `json:"retry"`

	Cause      string `json:"cause"`
	Ms         int64  `json:"ms"`
	Trigger    string `json:"trigger"`
	PreTokens  int64  `json:"preTokens"`
	PostTokens int64  `json:"postTokens"`

	Repo    string `json:"repo"`
	SHA     string `json:"sha"`
	Files   int    `json:"files"`
	Ins     int    `json:"ins"`
	Del     int    `json:"del"`
	Number  int    `json:"number"`
	Tracker string `json:"tracker"`
	Action  string `json:"action"`
	ID      string `json:"id"`
	Name    string `json:"name"`
	From    string `json:"from"`
	To      string `json:"to"`
}

// IsCall reports whether the event is a tool call.
func (e *Event) IsCall() bool {
	switch e.Kind {
	case "read", "search", "edit", "exec", "verify", "mcp", "skill", "subagent", "web", "tool":
		return true
	}
	return false
}

// NoUsage reports whether a model request recorded no token usage: its
// log gave none (Cursor writes none; a Codex response no token_count
// measured), as a request always reads a prompt.
func (e *Event) NoUsage() bool {
	return e.Kind == "llm" && e.In == 0 && e.CW == 0 && e.CR == 0 && e.Out == 0 && e.Cost == 0
}

// RequestsWithoutUsage counts the map's model requests that recorded no
// token usage (Event.NoUsage): its token totals and cost leave them out.
func (m *Map) RequestsWithoutUsage() int {
	n := 0
	for i := range m.Events {
		if m.Events[i].NoUsage() {
			n++
		}
	}
	return n
}

// Lane is the event's agent lane ("main" when absent).
func (e *Event) Lane() string {
	if e.Agent == "" {
		return "main"
	}
	return e.Agent
}
