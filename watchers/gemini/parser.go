package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/internal/regular"
	"github.com/agentmap/agentmap/watchers"
)

// stateVersion changes when the carry-state layout changes incompatibly.
const stateVersion = 1

// recent is how many of the latest messages keep their full carry-state
// (what was emitted for them): the client only ever updates its last
// message, so older ones keep only a short digest of their id, enough not
// to count them again when a history rewrite ($set messages) lists them.
const recent = 32

// state is the carry-state: ids, counters and times, never text.
type state struct {
	V    int    `json:"v"`
	N    int64  `json:"n,omitempty"` // records seen (for error messages)
	Sent bool   `json:"sent,omitempty"`
	T    int64  `json:"t,omitempty"`  // last known time, Unix ms
	In   int64  `json:"in,omitempty"` // time of the last input (prompt or tool result)
	Mod  string `json:"mod,omitempty"`
	CWD  bool   `json:"cwd,omitempty"` // the project root was given to the path resolver
	// Msgs are the latest messages seen, oldest first; Old the digests of
	// the ids of earlier ones.
	Msgs  []*msg          `json:"msgs,omitempty"`
	Old   map[string]bool `json:"old,omitempty"`
	Paths json.RawMessage `json:"paths,omitempty"`
}

// msg is what was emitted for one message: its updates (tokens arriving,
// tool calls completing) emit only what is new.
type msg struct {
	ID    string   `json:"id"`
	T     int64    `json:"t,omitempty"`
	Text  int      `json:"text,omitempty"` // characters of text counted
	Tok   int64    `json:"tok,omitempty"`  // total of the usage emitted
	Lat   int64    `json:"lat,omitempty"`
	Think bool     `json:"think,omitempty"`
	Calls []string `json:"calls,omitempty"` // tool call ids emitted
}

// Parser is the incremental parser of Gemini CLI chat records. It
// implements watchers.Parser.
type Parser struct {
	src   watchers.Source
	st    state
	paths *redact.Paths
	out   []event.Event
}

// NewParser returns a parser for a file routed to src.
func NewParser(src watchers.Source) *Parser {
	return &Parser{src: src, st: state{V: stateVersion}, paths: redact.NewPaths()}
}

// Restore returns a parser with the carry-state from State.
func Restore(src watchers.Source, b []byte) (*Parser, error) {
	p := NewParser(src)
	if len(b) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(b, &p.st); err != nil {
		return nil, errors.New("gemini: restore state: invalid state")
	}
	if p.st.V != stateVersion {
		return nil, fmt.Errorf("gemini: restore state: version %d, want %d", p.st.V, stateVersion)
	}
	if len(p.st.Paths) > 0 {
		paths, err := redact.RestorePaths(p.st.Paths)
		if err != nil {
			return nil, fmt.Errorf("gemini: restore paths: %w", err)
		}
		p.paths = paths
	}
	p.st.Paths = nil
	return p, nil
}

// State implements watchers.Parser.
func (p *Parser) State() ([]byte, error) {
	ps, err := p.paths.MarshalState()
	if err != nil {
		return nil, fmt.Errorf("gemini: paths state: %w", err)
	}
	st := p.st
	st.Paths = ps
	return json.Marshal(&st)
}

// SetPath hands the parser the file it reads. The client keeps no working
// directory in its chat files; the project root is in the .project_root
// file of the project's temp directory (tmp/<project>/), which relative
// tool paths resolve against. It is read once.
func (p *Parser) SetPath(path string) {
	if p.st.CWD {
		return
	}
	dir := filepath.Dir(path)
	for i := 0; i < 3; i++ {
		if filepath.Base(dir) == "chats" {
			if b, err := regular.ReadFile(filepath.Join(filepath.Dir(dir), ".project_root")); err == nil {
				if root := strings.TrimSpace(string(b)); filepath.IsAbs(root) {
					p.paths.SetCWD(root)
				}
			}
			break
		}
		dir = filepath.Dir(dir)
	}
	p.st.CWD = true
}

// errInternal reports a parser fault on one record; the record is dropped.
var errInternal = errors.New("internal parser fault")

// Line implements watchers.Parser.
func (p *Parser) Line(line []byte, out []event.Event) (res []event.Event, err error) {
	p.st.N++
	n := p.st.N
	defer func() {
		if r := recover(); r != nil {
			res, err = out, fmt.Errorf("gemini: record %d: %w", n, errInternal)
		}
		p.out = nil
	}()
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return out, nil
	}
	if line[0] != '{' {
		return out, fmt.Errorf("gemini: record %d: not a JSON object", n)
	}
	var r record
	if err := watchers.DecodeLenient(line, &r); err != nil {
		return out, fmt.Errorf("gemini: record %d: invalid JSON", n)
	}
	p.out = out
	if !p.record(&r) {
		return out, fmt.Errorf("gemini: record %d: not a chat record", n)
	}
	return p.out, nil
}

// record applies one decoded record; false for an object of no known form.
func (p *Parser) record(r *record) bool {
	switch {
	case r.RewindTo != nil:
		// The client drops the messages from that one on from its view;
		// what they cost was spent all the same, and stays in the map.
		return true
	case r.Set != nil:
		// A history the client rebuilt itself (its session context at
		// the start, a compressed history): messages already seen may
		// gain what they lacked; new ones are the client's own text, not
		// prompts or requests, and are only remembered.
		for _, raw := range r.Set.Messages {
			p.messageRaw(raw, true)
		}
		return true
	case r.ID != "" && r.Type != "":
		p.message(r)
		return true
	case r.SessionID != "":
		p.session(r)
		for _, raw := range r.Messages {
			p.messageRaw(raw, false)
		}
		return true
	}
	return false
}

func (p *Parser) session(r *record) {
	if t, ok := parseTime(r.StartTime); ok && p.st.T == 0 {
		p.st.T = t
	}
	if !p.st.CWD && len(r.Directories) > 0 && filepath.IsAbs(r.Directories[0]) {
		p.paths.SetCWD(r.Directories[0])
		p.st.CWD = true
	}
	p.declare()
}

// declare emits the session record (or, for a subagent's file, its lane)
// once.
func (p *Parser) declare() {
	if p.st.Sent {
		return
	}
	p.st.Sent = true
	if p.src.Lane != "" {
		p.out = append(p.out, event.Event{Kind: event.KindLane, T: p.st.T, Agent: p.src.Lane, Lane: &event.Lane{}})
		return
	}
	p.out = append(p.out, event.Event{Kind: event.KindSession, T: p.st.T,
		Session: &event.Session{NativeID: p.src.Session, AgentTool: Tool}})
}

func (p *Parser) messageRaw(raw json.RawMessage, history bool) {
	var r record
	if watchers.DecodeLenient(raw, &r) == nil && r.ID != "" && r.Type != "" {
		if history {
			if m, old := p.find(safeID(r.ID)); m == nil && !old {
				p.remember(&msg{ID: safeID(r.ID)})
				return
			}
		}
		p.message(&r)
	}
}

// emit appends an event on the file's lane, declaring the session first.
func (p *Parser) emit(ev event.Event) {
	p.declare()
	if ev.T == 0 {
		ev.T = p.st.T
	}
	ev.Agent = p.src.Lane
	p.out = append(p.out, ev)
}

// find returns the carry-state of a message seen among the recent ones,
// and whether an older one had that id.
func (p *Parser) find(id string) (*msg, bool) {
	for _, m := range p.st.Msgs {
		if m.ID == id {
			return m, false
		}
	}
	return nil, p.st.Old[digest(id)]
}

func (p *Parser) remember(m *msg) {
	p.st.Msgs = append(p.st.Msgs, m)
	for len(p.st.Msgs) > recent {
		if p.st.Old == nil {
			p.st.Old = map[string]bool{}
		}
		p.st.Old[digest(p.st.Msgs[0].ID)] = true
		p.st.Msgs = p.st.Msgs[1:]
	}
}

// digest is a short stand-in for a message id in the carry-state.
func digest(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:6])
}

// message applies one message record: new messages are emitted whole, a
// message recorded again (the client appends the whole message each time
// it changes) emits only what it gained.
func (p *Parser) message(r *record) {
	id := safeID(r.ID)
	t, ok := parseTime(r.Timestamp)
	if ok && t > p.st.T {
		p.st.T = t
	}
	if !ok {
		t = p.st.T
	}
	m, old := p.find(id)
	if old {
		return // an old message listed again by a history rewrite
	}
	fresh := m == nil
	if fresh {
		m = &msg{ID: id, T: t}
		p.remember(m)
	}
	switch r.Type {
	case "user":
		if fresh {
			p.user(r, t)
		}
	case "gemini":
		p.gemini(r, m, fresh)
	case "error":
		if fresh {
			sh := measure(r.Content)
			p.emit(event.Event{Kind: event.KindError, T: t,
				Error: &event.Error{Source: "llm", Class: redact.APIErrorClass(sh.text), SrcUUID: id}})
		}
	}
}

// user is a prompt, or the turn that carries tool responses back to the
// model (its parts are functionResponse parts): only a prompt of the
// session's own file is a user event; all are the input a model latency is
// measured from.
func (p *Parser) user(r *record, t int64) {
	p.st.In = t
	if p.src.Lane != "" {
		return // a subagent's prompts are its parent's instruction and the client's nudges
	}
	sh := measure(r.Content)
	if sh.Responses > 0 && sh.Chars == 0 {
		return
	}
	p.emit(event.Event{Kind: event.KindUser, T: t,
		User: &event.User{Chars: sh.Chars, Images: sh.Images, URLs: redact.CountURLs(sh.text)}})
}

// gemini is one model response: its usage, text and the tool calls it
// made, with their results once the client recorded them.
func (p *Parser) gemini(r *record, m *msg, fresh bool) {
	model := ident(r.Model)
	if fresh {
		if model != "" && model != p.st.Mod {
			p.st.Mod = model
			p.emit(event.Event{Kind: event.KindModel, T: m.T, Model: model})
		}
		m.Lat = -1
		if p.st.In > 0 && m.T >= p.st.In {
			m.Lat = m.T - p.st.In
		}
	}
	if model == "" {
		model = p.st.Mod
	}
	sh := measure(r.Content)
	think := hasItems(r.Thoughts)
	var calls []toolCall
	for _, tc := range r.ToolCalls {
		if id := callID(tc.ID); id != "" && !contains(m.Calls, id) {
			calls = append(calls, tc)
		}
	}
	var tok int64
	l := event.LLM{MsgID: m.ID, LatencyMs: m.Lat, ToolCalls: len(calls), Thinking: think && !m.Think}
	if r.Tokens != nil {
		l.In, l.CR, l.Out = r.Tokens.split()
		tok = l.Usage()
	}
	if sh.Chars > m.Text {
		l.TextChars = sh.Chars - m.Text
	}
	if p.src.Lane != "" {
		// A subagent answers its parent in complete_task's result, not in
		// text of its own: that answer is the text it wrote, so that a
		// subagent that finished is not read as one that stopped short
		// (outcome incomplete: no text after its last call).
		for _, tc := range calls {
			if ident(tc.Name) == "complete_task" {
				l.TextChars += resultChars(tc.Args)
			}
		}
	}
	if fresh || tok > m.Tok || l.TextChars > 0 || len(calls) > 0 || l.Thinking {
		if tok < m.Tok {
			l.In, l.CR, l.Out = 0, 0, 0 // a smaller snapshot never replaces the larger one
		}
		p.emit(event.Event{Kind: event.KindLLM, T: m.T, Model: model, LLM: &l})
	}
	m.Tok = max(m.Tok, tok)
	m.Text = max(m.Text, sh.Chars)
	m.Think = m.Think || think
	for i := range calls {
		tc := &calls[i]
		id := callID(tc.ID)
		m.Calls = append(m.Calls, id)
		p.toolCall(tc, id, m.T)
	}
}

// resultChars is the length in characters of complete_task's result: a
// string's characters, or the JSON of any other value.
func resultChars(raw json.RawMessage) int {
	var a struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(raw, &a) != nil || len(a.Result) == 0 || string(a.Result) == "null" {
		return 0
	}
	var s string
	if json.Unmarshal(a.Result, &s) == nil {
		return utf8.RuneCountInString(s)
	}
	return utf8.RuneCount(a.Result)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// safeID keeps an id that is an identifier and replaces anything else by
// a digest, so that no text reaches a map through an id.
func safeID(s string) string {
	if s == "" || ident(s) == s {
		return s
	}
	h := sha256.Sum256([]byte(s))
	return "h" + hex.EncodeToString(h[:8])
}

// callID stands in for a tool call's id: the client builds it from the
// tool's name and whatever id the model gave the call, so it is kept only
// as a digest (it pairs a call with its result and nothing else).
func callID(s string) string {
	if s == "" {
		return ""
	}
	h := sha256.Sum256([]byte(s))
	return "c" + hex.EncodeToString(h[:8])
}

func (p *Parser) flushRepos(t int64) {
	for _, r := range p.paths.NewRepos() {
		r := r
		p.emit(event.Event{Kind: event.KindRepo, T: t, Repo: &r})
	}
}
