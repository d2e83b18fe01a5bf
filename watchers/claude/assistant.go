package claude

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// message is the part of an assistant or user message the parser reads.
type message struct {
	ID    json.RawMessage `json:"id"`
	Model json.RawMessage `json:"model"`
	// Blocks is the content when it is an array of blocks, decoded with the
	// line in one pass. Text is the content when it is one string; the
	// decoder cannot put a string into Blocks, so Line fills Text with a
	// second, small decode (see textContent).
	Blocks     []block         `json:"content"`
	Text       json.RawMessage `json:"-"`
	StopReason json.RawMessage `json:"stop_reason"`
	Usage      *usage          `json:"usage"`

	bufs *lineBuffers // see envelope
}

type usage struct {
	Input         json.RawMessage `json:"input_tokens"`
	CacheCreation json.RawMessage `json:"cache_creation_input_tokens"`
	CacheRead     json.RawMessage `json:"cache_read_input_tokens"`
	Output        json.RawMessage `json:"output_tokens"`
	Split         *struct {
		M5 json.RawMessage `json:"ephemeral_5m_input_tokens"`
		H1 json.RawMessage `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	// Speed is "fast" for a fast-mode response, billed at a multiple.
	Speed string `json:"speed"`

	// split, when set, is the buffer the cache split is read into (a
	// line's own usage and a relayed one's each have theirs).
	split *cacheSplit
}

// fill copies the token counts into l (nothing when u is nil).
func (u *usage) fill(l *event.LLM) {
	if u == nil {
		return
	}
	l.In, l.CR, l.Out = integer(u.Input), integer(u.CacheRead), integer(u.Output)
	l.CW = integer(u.CacheCreation)
	if u.Split != nil {
		if l.CW == 0 {
			l.CW = integer(u.Split.M5) + integer(u.Split.H1)
		}
		// The 1-hour writes are billed at twice the input price, the
		// 5-minute ones at 1.25 times: the split is kept.
		l.CW1h = min(integer(u.Split.H1), l.CW)
	}
	l.Fast = u.Speed == "fast"
}

// compactionRequest emits the request of a compaction side transcript
// (agent-acompact-*): Claude Code sends the whole conversation to the model
// to summarise it, and that request is billed. It is a side request of the
// main lane; the rest of the transcript (the replayed conversation, the
// summary's text) is not read.
func (p *Parser) compactionRequest(env *envelope, out []event.Event) []event.Event {
	msg := env.Message
	if env.Type != "assistant" || msg == nil || msg.Usage == nil {
		return out
	}
	model := p.model.get(msg.Model)
	if model == syntheticModel {
		return out
	}
	l := &event.LLM{MsgID: p.responseID(msg, env), LatencyMs: -1, Side: "compaction"}
	msg.Usage.fill(l)
	if l.Usage() == 0 {
		return out
	}
	return append(out, event.Event{Kind: event.KindLLM, T: p.st.T, Model: ident(model), LLM: l})
}

// responseID is the id of a response: the message id, with the request
// id when the line has one.
func (p *Parser) responseID(msg *message, env *envelope) string {
	id := ident(p.msgID.get(msg.ID))
	if req := ident(p.requestID.get(env.RequestID)); id != "" && req != "" {
		if p.lastResponse.id != id || p.lastResponse.req != req {
			// Lines of one response follow each other: the joined id
			// is built once for them.
			p.lastResponse = responseKey{id: id, req: req, joined: id + "/" + req}
		}
		return p.lastResponse.joined
	}
	return id
}

// block is one content block. Text-bearing fields are raw so that they can
// be measured without being decoded; thinking text, signatures and
// redacted-thinking data are not declared at all.
type block struct {
	Type      string          `json:"type"`
	Text      json.RawMessage `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   json.RawMessage `json:"is_error"`
	Source    *struct {
		Data json.RawMessage `json:"data"`
		// dataLen is Data's length when the walk measured it.
		dataLen jsonscan.Len
	} `json:"source"`

	// textLen and contentLen are the lengths of Text and Content when
	// the walk measured them (strings: a text, a tool's output) as it
	// validated them.
	textLen, contentLen jsonscan.Len
}

// syntheticModel marks lines Claude Code writes itself (API errors, notices).
const syntheticModel = "<synthetic>"

func (p *Parser) assistant(env *envelope, out []event.Event) []event.Event {
	msg := env.Message
	if msg == nil {
		return out // no message: nothing was said
	}
	model := p.model.get(msg.Model)
	if model == syntheticModel || boolean(env.IsAPIError) {
		return p.apiErrorLine(env, msg, out)
	}
	blocks := msg.Blocks

	l := &event.LLM{MsgID: p.responseID(msg, env), Stop: ident(word(msg.StopReason))}
	msg.Usage.fill(l)
	if l.MsgID == "" || p.st.firstLineOf(l.MsgID) {
		l.LatencyMs = -1
		if p.st.InputT > 0 && p.st.T >= p.st.InputT {
			l.LatencyMs = p.st.T - p.st.InputT
		}
	}
	if msg.Text != nil {
		_, l.TextChars, _ = jsonscan.StringLen(msg.Text)
	}
	// The response's record goes first, its calls after it; the blocks
	// complete it through the pointer.
	e := p.ev(event.KindLLM)
	e.Model = ident(model)
	e.LLM = l
	out = append(out, e)
	for i := range blocks {
		b := &blocks[i]
		switch b.Type {
		case "text":
			_, n := b.textLen.Of(b.Text)
			l.TextChars += n
		case "thinking", "redacted_thinking":
			l.Thinking = true
		case "tool_use", "server_tool_use":
			l.ToolCalls++
			out = append(out, p.call(b))
		case "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result":
			out = append(out, p.serverResult(b))
		}
	}
	return out
}

// apiErrorLine turns a synthetic assistant line into an API error record.
// Synthetic lines that are not errors ("No response requested.") are
// notices and yield nothing.
func (p *Parser) apiErrorLine(env *envelope, msg *message, out []event.Event) []event.Event {
	if !boolean(env.IsAPIError) && len(bytes.TrimSpace(env.Error)) == 0 {
		return out
	}
	// The class comes from the error code and HTTP status. The message text
	// is looked at only for the status number and the usage-limit notice,
	// which the error code alone does not tell apart from a rate limit.
	sig := []string{str(env.Error)}
	if s := integer(env.APIErrorStatus); s > 0 {
		sig = append(sig, strconv.FormatInt(s, 10))
	}
	hints := apiErrorHints(msg.Blocks)
	for _, h := range hints {
		if h == usageLimit {
			sig = nil
		}
	}
	sig = append(sig, hints...)
	e := p.ev(event.KindError)
	e.Error = &event.Error{Source: "llm", Class: redact.APIErrorClass(strings.Join(sig, " ")), SrcUUID: ident(str(env.UUID))}
	return append(out, e)
}

const usageLimit = "usage limit"

// apiErrorHints reads the text of a synthetic error message and returns
// only fixed words: its HTTP status and whether it is a usage limit.
func apiErrorHints(blocks []block) []string {
	var hints []string
	for _, b := range blocks {
		if b.Type != "text" {
			continue
		}
		t := str(b.Text)
		if rest, ok := strings.CutPrefix(t, "API Error: "); ok && len(rest) >= 3 {
			if n, err := strconv.Atoi(rest[:3]); err == nil && n >= 100 && n < 600 {
				hints = append(hints, strconv.Itoa(n))
			}
		}
		low := strings.ToLower(t)
		if strings.Contains(low, "usage limit") || strings.Contains(low, "hit your limit") {
			hints = append(hints, usageLimit)
		}
	}
	return hints
}
