package cursor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
)

// Parser reads a Cursor agent transcript (JSONL) line by line.
//
// Transcript lines carry no timestamps, ids, model, usage or tool results,
// so every event has T = 0 and the line order is the only order; the
// session's bounds come from the file's times through SetFile. Each
// assistant line is one model response (a KindLLM record with its text
// length, thinking flag and number of tool calls, no model and no tokens);
// its tool_use blocks follow as calls without an id and without a result.
type Parser struct {
	src   watchers.Source
	paths *redact.Paths
	st    carry
	// line and blocks are the walk's buffers, reused from line to line.
	line   scannedLine
	blocks []block
}

// release drops what the buffers hold of the last line.
func (p *Parser) release() {
	p.line = scannedLine{}
	clear(p.blocks)
}

// carry is the serialised carry-state.
type carry struct {
	V       int    `json:"v"`
	Line    int    `json:"line"`
	Started bool   `json:"started,omitempty"`
	Project string `json:"project,omitempty"`
	Root    bool   `json:"root,omitempty"`
	StartMs int64  `json:"st,omitempty"`
	EndMs   int64  `json:"et,omitempty"`
	// The bounds last emitted in a KindSession event.
	SentStart int64  `json:"sst,omitempty"`
	SentEnd   int64  `json:"set,omitempty"`
	Paths     []byte `json:"paths,omitempty"`
}

const stateVersion = 1

// NewParser returns a parser for a file routed to src.
func NewParser(src watchers.Source) *Parser {
	return &Parser{src: src, paths: redact.NewPaths(), st: carry{V: stateVersion}}
}

// Restore returns a parser with the carry-state from State.
func Restore(src watchers.Source, state []byte) (*Parser, error) {
	p := NewParser(src)
	if len(state) == 0 {
		return p, nil
	}
	var st carry
	if err := json.Unmarshal(state, &st); err != nil {
		return nil, errors.New("cursor: carry-state is not valid JSON")
	}
	if st.V != stateVersion {
		return nil, fmt.Errorf("cursor: carry-state version %d, want %d", st.V, stateVersion)
	}
	if len(st.Paths) > 0 {
		paths, err := redact.RestorePaths(st.Paths)
		if err != nil {
			return nil, fmt.Errorf("cursor: restore paths: %w", err)
		}
		p.paths = paths
	}
	st.Paths = nil
	p.st = st
	return p, nil
}

// SetFile gives the parser what the transcript's lines do not say and its
// file does: the path (its project folder lets the parser recognise the
// workspace root among the absolute paths the lines name) and the file's
// times in Unix ms (birth or first-seen time, and modification time), which
// bound the session since no line carries a time. Call it before Line;
// when the bounds change, the next Line repeats the KindSession event with
// the new ones. Zero values leave what is known unchanged.
func (p *Parser) SetFile(path string, startMs, endMs int64) {
	if pr := ProjectOf(path); pr != "" && !p.st.Root {
		p.st.Project = pr
	}
	if startMs > 0 {
		p.st.StartMs = startMs
	}
	if endMs > 0 {
		p.st.EndMs = endMs
	}
}

// State implements watchers.Parser.
func (p *Parser) State() ([]byte, error) {
	st := p.st
	ps, err := p.paths.MarshalState()
	if err != nil {
		return nil, fmt.Errorf("cursor: paths state: %w", err)
	}
	st.Paths = ps
	return json.Marshal(st)
}

// line is the shape of one transcript line; only what is used is decoded.
type line struct {
	Role    string `json:"role"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	Message *struct {
		Content []block `json:"content"`
	} `json:"message"`
}

var errContent = errors.New("message content is not a string or an array of blocks")

// decodeMessage decodes a JSON object whose field at path (message.content
// or content) holds blocks, in one pass: the content is decoded straight
// into blocks, and only when it turns out to be a bare string is it read
// again as one text block. A field of an unexpected type elsewhere is left
// zero; malformed JSON, or content that is neither, is an error. The
// errors never quote the input.
func decodeMessage(raw []byte, v any, path string, blocks *[]block) error {
	err := json.Unmarshal(raw, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return errors.New("invalid JSON")
	}
	if te.Field != path {
		return nil
	}
	if te.Value != "string" {
		return errContent
	}
	var s struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return errContent
	}
	text := s.Content
	if path == "message.content" {
		text = s.Message.Content
	}
	*blocks = []block{{Type: "text", Text: text}}
	return nil
}

// decodeLine is the line as encoding/json reads it (see decodeMessage).
func decodeLine(raw []byte) (scannedLine, []block, error) {
	var l line
	var text []block
	if err := decodeMessage(raw, &l, "message.content", &text); err != nil {
		return scannedLine{}, nil, err
	}
	var blocks []block
	if l.Message != nil {
		blocks = l.Message.Content
	}
	if text != nil {
		blocks = text
	}
	return scannedLine{Role: l.Role, Type: l.Type, Status: l.Status}, blocks, nil
}

// block is one content block. Text is decoded to be measured, never kept.
type block struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Input      json.RawMessage `json:"input"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	// Tool results (store.db tool messages; Claude-style tool_result).
	ToolUseID    string          `json:"tool_use_id"`
	Result       json.RawMessage `json:"result"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"isError"`
	IsErrorSnake bool            `json:"is_error"`
	// rawText is the text as the walk found it (see scanLine), to be
	// measured in place; Text is then empty.
	rawText []byte
}

// Line implements watchers.Parser.
func (p *Parser) Line(raw []byte, out []event.Event) ([]event.Event, error) {
	p.st.Line++
	n := p.st.Line
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return out, nil
	}
	if raw[0] != '{' {
		return out, fmt.Errorf("cursor: line %d: not a JSON object", n)
	}
	l := &p.line
	*l = scannedLine{}
	blocks, ok := scanLine(raw, l, p.blocks)
	p.blocks = blocks
	defer p.release() // the line and its blocks alias raw
	if !ok {
		// Something the walk does not mirror exactly, or invalid JSON:
		// encoding/json decides, and names the error.
		var err error
		if *l, blocks, err = decodeLine(raw); err != nil {
			return out, fmt.Errorf("cursor: line %d: %v", n, err)
		}
	}
	out = p.header(out)

	agent := p.src.Lane
	switch {
	case l.Type == "turn_ended":
		if src, cls := turnError(l.Status); cls != "" {
			out = append(out, event.Event{Kind: event.KindError, Agent: agent,
				Error: &event.Error{Source: src, Class: cls}})
		}
		out = append(out, event.Event{Kind: event.KindTurnEnd, Agent: agent})
	case l.Role == "user":
		var u event.User
		for i := range blocks {
			b := &blocks[i]
			switch b.Type {
			case "text", "input_text":
				c, urls := promptShape(b.text())
				u.Chars += c
				u.URLs += urls
			case "image", "image_url", "input_image":
				u.Images++
			}
		}
		if u.Chars > 0 || u.Images > 0 {
			out = append(out, event.Event{Kind: event.KindUser, Agent: agent, User: &u})
		}
	case l.Role == "assistant" && len(blocks) > 0:
		llm := event.LLM{LatencyMs: -1}
		var specs []callSpec
		for i := range blocks {
			b := &blocks[i]
			switch b.Type {
			case "text", "output_text":
				llm.TextChars += b.runes()
			case "thinking", "redacted_thinking", "reasoning":
				llm.Thinking = true
			case "tool_use", "tool-call", "tool_call":
				specs = append(specs, toolUseSpec(*b))
			}
		}
		llm.ToolCalls = len(specs)
		out = append(out, event.Event{Kind: event.KindLLM, Agent: agent, LLM: &llm})
		for k, s := range specs {
			p.findRoot(s)
			var c event.Call
			c, out = buildCall(s, p.paths, 0, agent, out)
			out = append(out, event.Event{Kind: event.KindCall, Agent: agent, Call: &c})
			if c.Kind == "subagent" && agent == "" {
				out = p.launch(&c, n, k, out)
			}
		}
	}
	return out, nil
}

// header emits the facts due before the line's own events: the session (on
// the first line of a session's own file, and again when SetFile changed
// its bounds), or the lane of a subagent file.
func (p *Parser) header(out []event.Event) []event.Event {
	if p.src.Lane != "" {
		if !p.st.Started {
			p.st.Started = true
			out = append(out, event.Event{Kind: event.KindLane, Agent: p.src.Lane,
				Lane: &event.Lane{LogStartMs: p.st.StartMs}})
		}
		return out
	}
	if p.st.Started && p.st.SentStart == p.st.StartMs && p.st.SentEnd == p.st.EndMs {
		return out
	}
	p.st.Started = true
	p.st.SentStart, p.st.SentEnd = p.st.StartMs, p.st.EndMs
	s := &event.Session{NativeID: p.src.Session, AgentTool: AgentTool, Role: "root",
		StartT: p.st.StartMs, EndT: p.st.EndMs}
	return append(out, event.Event{Kind: event.KindSession, Session: s})
}

// launch declares the lane a main-transcript subagent call starts. Cursor
// writes no id on the call and none of the subagent's file, so the call
// gets one from its place (line and block) and the lane an id derived from
// it and the session; the lane is Launched: listed even when the
// subagent's file is absent, and a subagent file of the session takes its
// place when present (the builder pairs them in order). The call is
// updated in place (its id); out gains the KindLane.
func (p *Parser) launch(c *event.Call, line, block int, out []event.Event) []event.Event {
	if c.ID == "" {
		c.ID = fmt.Sprintf("launch:%d:%d", line, block)
	}
	sum := sha256.Sum256([]byte(p.src.Session + "\x00" + c.ID))
	lane := "sa-" + hex.EncodeToString(sum[:6])
	return append(out, event.Event{Kind: event.KindLane, Agent: lane,
		Lane: &event.Lane{SubagentType: c.SubagentType, LaunchCallID: c.ID, Launched: true}})
}

// findRoot sets the resolver's cwd to the workspace root the first time an
// absolute path under it shows up (see rootFor).
func (p *Parser) findRoot(s callSpec) {
	if p.st.Root || p.st.Project == "" {
		return
	}
	var cands []string
	for _, in := range s.inputs {
		if wd := in.str("working_directory"); wd != "" {
			cands = append(cands, wd)
		}
		cands = append(cands, in.paths()...)
	}
	for _, f := range s.files {
		cands = append(cands, f.path)
	}
	for _, c := range cands {
		if root := rootFor(c, p.st.Project); root != "" {
			p.paths.SetCWD(root)
			p.st.Root = true
			return
		}
	}
}

// toolUseSpec reads a tool_use block (name, input) or a tool-call block
// (toolName, args, toolCallId). An input that is a bare string is an
// apply_patch text.
func toolUseSpec(b block) callSpec {
	s := callSpec{id: b.ID, name: b.Name}
	if b.ToolName != "" && s.name == "" {
		s.name = b.ToolName
	}
	if s.id == "" {
		s.id = b.ToolCallID
	}
	in := b.Input
	if len(trimSpace(in)) == 0 {
		in = b.Args
	}
	if kept, txt, isText, ok := keptInput(in); ok {
		switch {
		case isText:
			s.files, s.patched = patchFiles(txt), true
		case kept != nil:
			s.inputs = []input{kept}
		}
		return s
	}
	in = trimSpace(in)
	if len(in) > 0 && in[0] == '"' {
		if d := decodeInput(in); d != nil {
			s.inputs = []input{d.reduce()}
			return s
		}
		var txt string
		if json.Unmarshal(in, &txt) == nil {
			s.files, s.patched = patchFiles(txt), true
		}
		return s
	}
	if d := decodeInput(in); d != nil {
		s.inputs = []input{d.reduce()}
	}
	return s
}

// turnError maps a turn_ended status to an error source and class, or ""
// for a turn that ended normally or with a status we do not know.
func turnError(status string) (source, class string) {
	switch status {
	case "aborted", "cancelled", "canceled", "interrupted", "stopped":
		return "orchestration", "interrupted"
	case "error", "failed", "failure":
		return "llm", "api_error"
	}
	return "", ""
}
