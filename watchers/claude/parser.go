package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
)

// AgentTool is the agentTool of Claude Code sessions.
const AgentTool = "claude-code"

// Parser is the incremental parser of one Claude Code transcript file. It
// implements watchers.Parser.
type Parser struct {
	src   watchers.Source
	paths *redact.Paths
	st    carry
	// named says the file's name is the session's id (see sessionID).
	named bool

	// env is the buffer each line is read into, reused from line to line;
	// Line drops what it holds of the line before it returns.
	env  envelope
	bufs lineBuffers
	// Members that repeat from line to line, decoded once while they do.
	cwd, version, sessionID, model, msgID, requestID lastString
	lastResponse                                     responseKey
	relay                                            relayedCache
	// declared is the cwd last declared a repository.
	declared string
}

// responseKey is the last response id built from a message id and a
// request id.
type responseKey struct{ id, req, joined string }

// lineBuffers are the structs a line's message and usage are read into,
// reused from line to line instead of allocated for each.
type lineBuffers struct {
	msg    message
	usage  usage
	split  cacheSplit
	blocks []block
	// A progress line's data and the response it relays.
	data         progressData
	relayed      relayedLine
	relayedMsg   relayedMessage
	relayedUsage usage
	relayedSplit cacheSplit
}

// release drops what the buffers hold of the last line: they alias it.
// The blocks' array is kept for the next line, the line's blocks cleared
// (those past them were cleared by an earlier line).
func (p *Parser) release() {
	p.env = envelope{}
	p.bufs.reset()
}

func (b *lineBuffers) reset() {
	blocks := b.blocks
	if used := b.msg.Blocks; used != nil {
		clear(used)
		if cap(used) >= cap(blocks) {
			blocks = used // the same array, or the one it grew into
		}
	}
	*b = lineBuffers{blocks: blocks[:0]}
}

// lastString is the decoded value of a member that tends to repeat from
// line to line (a cwd, a version, a model, a response's ids): while its
// raw bytes stay the same, the string is not decoded and allocated again.
type lastString struct {
	raw []byte
	s   string
}

// maxRepeat bounds the bytes a lastString keeps.
const maxRepeat = 1024

// get is str(raw), the same string as last time when raw is the same.
func (c *lastString) get(raw json.RawMessage) string {
	if len(raw) == 0 || len(raw) > maxRepeat {
		return str(raw)
	}
	if c.raw == nil || !bytes.Equal(raw, c.raw) {
		c.s = str(raw)
		c.raw = append(c.raw[:0], raw...)
	}
	return c.s
}

var _ watchers.Parser = (*Parser)(nil)

// NewParser returns a parser for a file routed to src. When src.Lane is set,
// every event gets Agent = src.Lane.
func NewParser(src watchers.Source) *Parser {
	return &Parser{src: src, paths: redact.NewPaths(), named: uuidRE.MatchString(src.Session)}
}

// SetLaneMeta gives a subagent file's parser what the sidecar meta.json
// says (see ReadLaneMeta), for its lane record. Call it before the first
// line; later calls have no effect once the lane record is out.
func (p *Parser) SetLaneMeta(m LaneMeta) {
	if p.st.LaneSent {
		return
	}
	p.st.Meta = LaneMeta{SubagentType: ident(m.SubagentType), LaunchCallID: ident(m.LaunchCallID), Model: ident(m.Model)}
}

// NeedsLaneMeta reports whether SetLaneMeta can still matter: the file is
// a subagent lane whose lane record is not out yet. Main transcripts have
// no sidecar, so callers skip the look-up for them.
func (p *Parser) NeedsLaneMeta() bool { return p.src.Lane != "" && !p.st.LaneSent }

// envelope holds the fields of a line that every record type may carry.
// Text-bearing fields are not declared, so the decoder skips them.
type envelope struct {
	Type        string          `json:"type"`
	Subtype     string          `json:"subtype"`
	UUID        json.RawMessage `json:"uuid"`
	SessionID   json.RawMessage `json:"sessionId"`
	Timestamp   json.RawMessage `json:"timestamp"`
	CWD         json.RawMessage `json:"cwd"`
	GitBranch   json.RawMessage `json:"gitBranch"`
	Version     json.RawMessage `json:"version"`
	IsSidechain json.RawMessage `json:"isSidechain"`
	AgentID     json.RawMessage `json:"agentId"`
	ForkedFrom  json.RawMessage `json:"forkedFrom"`

	// bufs, when set, holds the structs a walk reads nested objects into.
	bufs *lineBuffers

	// user and assistant
	Message          *message        `json:"message"`
	RequestID        json.RawMessage `json:"requestId"`
	IsMeta           json.RawMessage `json:"isMeta"`
	IsCompactSummary json.RawMessage `json:"isCompactSummary"`
	TranscriptOnly   json.RawMessage `json:"isVisibleInTranscriptOnly"`
	Origin           json.RawMessage `json:"origin"`
	PromptSource     json.RawMessage `json:"promptSource"`
	ToolUseResult    structured      `json:"toolUseResult"`
	IsAPIError       json.RawMessage `json:"isApiErrorMessage"`
	Error            json.RawMessage `json:"error"`
	APIErrorStatus   json.RawMessage `json:"apiErrorStatus"`

	// system
	CompactMetadata       json.RawMessage `json:"compactMetadata"`
	RetryAttempt          json.RawMessage `json:"retryAttempt"`
	Cause                 json.RawMessage `json:"cause"`
	HookErrors            json.RawMessage `json:"hookErrors"`
	PreventedContinuation json.RawMessage `json:"preventedContinuation"`
	HookLabel             json.RawMessage `json:"hookLabel"`
	ToolUseID             json.RawMessage `json:"toolUseID"`

	// attachment
	Attachment json.RawMessage `json:"attachment"`

	// progress
	Data            *progressData   `json:"data"`
	ParentToolUseID json.RawMessage `json:"parentToolUseID"`
}

// Line implements watchers.Parser.
func (p *Parser) Line(line []byte, out []event.Event) ([]event.Event, error) {
	p.st.Line++
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return out, nil
	}
	if line[0] != '{' {
		return out, fmt.Errorf("claude: line %d: not a JSON object", p.st.Line)
	}
	env := &p.env
	*env = envelope{bufs: &p.bufs}
	defer p.release()
	if !env.scan(line) {
		// Something the walk does not mirror exactly, or invalid JSON:
		// encoding/json decides, and names the error.
		*env = envelope{}
		if err := decode(line, env); err != nil {
			return out, p.decodeError("line", err)
		}
		if env.Message != nil && env.Message.Blocks == nil {
			env.Message.Text = textContent(line)
		}
	}
	if env.Type == "" {
		return out, fmt.Errorf("claude: line %d: no record type", p.st.Line)
	}
	// A forked session (--fork-session, the SDK's forkSession) begins with
	// a copy of its parent's conversation, each copied line marked
	// forkedFrom: the parent's map holds those prompts, calls and
	// requests, so the fork's map starts at its own first line and its
	// tokens are not billed twice. (Neither their times: they are the
	// parent's.)
	if len(env.ForkedFrom) > 0 && env.ForkedFrom[0] == '{' {
		return out, nil
	}
	if t := millis(env.Timestamp); t > 0 {
		p.st.T = t
	}
	// A compaction side transcript (agent-acompact-*) replays the whole
	// conversation as one prompt to summarise it; the compaction itself is
	// recorded by the main file's compact_boundary. Only its billed
	// request counts, as a side request of the main lane.
	if hasPrefix(env.AgentID, "acompact") {
		return p.compactionRequest(env, out), nil
	}
	// Inline sidechain lines in a main file (old versions, /btw asides)
	// replay or fork parent messages under no lane of their own.
	if p.src.Lane == "" && boolean(env.IsSidechain) {
		return out, nil
	}
	if env.Type == "cost-state" {
		if p.src.Lane == "" {
			return p.costState(line, out), nil
		}
		return out, nil
	}
	if !parsedTypes[env.Type] {
		return out, nil
	}

	start := len(out)
	if cwd := p.cwd.get(env.CWD); cwd != "" {
		if nonEmptyString(env.GitBranch) && cwd != p.declared {
			// Claude Code recorded a branch: the cwd was a repository.
			// (Declaring the cwd just declared again is a no-op.)
			p.paths.DeclareRepo(cwd, "")
			p.declared = cwd
		}
		p.paths.SetCWD(cwd)
	}
	out = p.sessionFacts(env, out)

	switch env.Type {
	case "assistant":
		out = p.assistant(env, out)
	case "user":
		out = p.user(env, out)
	case "system":
		out = p.system(env, out)
	case "attachment":
		out = p.attachment(env, out)
	case "progress":
		// Streaming progress of tools, hooks and subagents: the tool
		// results and the subagent's own file carry what the map needs,
		// but for the subagent's requests where that file is missing.
		out = p.relayed(env, out)
	}
	return p.withRepos(out, start), nil
}

// withRepos inserts a repo record for each repo first seen on this line
// before the line's events, so that targets never refer to an unknown key.
func (p *Parser) withRepos(out []event.Event, start int) []event.Event {
	repos := p.paths.NewRepos()
	if len(repos) == 0 {
		return out
	}
	add := make([]event.Event, len(repos))
	for i := range repos {
		r := repos[i]
		add[i] = p.ev(event.KindRepo)
		add[i].Repo = &r
	}
	out = append(out, add...)
	copy(out[start+len(add):], out[start:len(out)-len(add)])
	copy(out[start:], add)
	return out
}

// ev starts an event of the given kind at the current time and lane.
func (p *Parser) ev(k event.Kind) event.Event {
	return event.Event{Kind: k, T: p.st.T, Agent: p.src.Lane}
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// sessionFacts emits the lane record of a subagent file at its first line,
// and the session record the first time a line gives it, again when the
// session id or the CLI version changes (a session resumed under a newer
// CLI).
func (p *Parser) sessionFacts(env *envelope, out []event.Event) []event.Event {
	if p.src.Lane != "" && !p.st.LaneSent {
		p.st.LaneSent = true
		e := p.ev(event.KindLane)
		e.Model = p.st.Meta.Model
		e.Lane = &event.Lane{SubagentType: p.st.Meta.SubagentType, LaunchCallID: p.st.Meta.LaunchCallID}
		out = append(out, e)
	}
	// A subagent file also names its session (the parent's), so that it
	// builds on its own when the parent's file is gone; the builder prefers
	// the main file's record.
	id := p.src.Session
	if p.src.Lane == "" {
		id = p.sessionFor(env.SessionID)
	}
	if id == "" {
		return out
	}
	ver := ident(p.version.get(env.Version))
	if id == p.st.Session && (ver == "" || ver == p.st.Version) {
		return out
	}
	p.st.Session = id
	if ver != "" {
		p.st.Version = ver
	}
	e := p.ev(event.KindSession)
	e.Session = &event.Session{NativeID: id, AgentTool: AgentTool, AgentVersion: p.st.Version}
	return append(out, e)
}

// sessionFor returns the native id of the session, given a line's
// sessionId. The file name is the id
// of a main transcript. Under another name (an archived copy), the lines
// tell, and a file may hold lines of more than one id (a conversation
// continued in a new session copies a line or two of the old one): the id
// of most lines so far wins, so that the last session record names the
// session most of the file belongs to.
func (p *Parser) sessionFor(raw json.RawMessage) string {
	if p.named {
		return p.src.Session
	}
	lineID := ident(p.sessionID.get(raw))
	if lineID == "" {
		return p.st.Session
	}
	if p.st.IDs == nil {
		p.st.IDs = map[string]int{}
	}
	if _, ok := p.st.IDs[lineID]; !ok && len(p.st.IDs) >= maxIDs {
		return p.st.Session
	}
	p.st.IDs[lineID]++
	if p.st.Session == "" || p.st.IDs[lineID] > p.st.IDs[p.st.Session] {
		return lineID
	}
	return p.st.Session
}

// textContent returns message.content when it is a string (a typed
// prompt, a compaction summary, an old-style reply), else nil.
func textContent(line []byte) json.RawMessage {
	var v struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if decode(line, &v) != nil || !isString(v.Message.Content) {
		return nil
	}
	return v.Message.Content
}

// decode unmarshals leniently: a value of an unexpected type (logs drift)
// leaves its field zero and the rest of the line is still read; only
// malformed JSON fails.
func decode(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return nil
	}
	return err
}

// decodeError names a decoding problem without quoting the input:
// encoding/json's syntax errors cite the offending character.
func (p *Parser) decodeError(what string, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("claude: line %d: invalid JSON in %s at byte %d", p.st.Line, what, se.Offset)
	case errors.As(err, &te):
		// Value is "string", "number" or "number <literal>": keep the word.
		kind, _, _ := strings.Cut(te.Value, " ")
		return fmt.Errorf("claude: line %d: unexpected %s for field %q in %s", p.st.Line, kind, te.Field, what)
	default:
		return fmt.Errorf("claude: line %d: unreadable %s", p.st.Line, what)
	}
}
