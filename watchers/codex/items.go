package codex

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// responseItem handles a ResponseItem (wrapper payload or legacy bare line).
func (p *Parser) responseItem(it *item, t int64) {
	switch it.Type {
	case "message":
		switch it.Role {
		case "assistant":
			p.modelOutput(t, facets{text: textRunes(it.Content)})
		case "user":
			// In the wrapper form the event_msg user_message is the one
			// source of prompts; this copy also carries injected context.
			if !p.st.HasCWD {
				p.cwdFromContext(it.Content)
			}
		}
	case "reasoning":
		p.modelOutput(t, facets{think: true})
	case "function_call":
		p.modelOutput(t, facets{tools: 1})
		p.functionCall(it.Name, it.Namespace, it.Arguments, it.CallID, t)
	case "custom_tool_call":
		p.modelOutput(t, facets{tools: 1})
		p.customCall(it, t)
	case "local_shell_call":
		p.modelOutput(t, facets{tools: 1})
		p.localShell(it, t)
	case "web_search_call":
		p.modelOutput(t, facets{tools: 1})
		p.webSearch(it, t)
	case "tool_search_call":
		p.modelOutput(t, facets{tools: 1})
		p.emitCall(t, it.CallID, event.Call{Tool: "tool_search", Kind: "tool", Cat: "tool"}, call{Tool: "tool_search"})
	case "image_generation_call":
		p.modelOutput(t, facets{tools: 1})
		p.emitCall(t, "", event.Call{Tool: "image_generation", Kind: "tool", Cat: "tool"}, call{})
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		p.output(it.CallID, it.Output, it.outputLen, t)
	case "tool_search_output":
		p.output(it.CallID, it.Tools, jsonscan.Len{}, t)
	case "compaction", "context_compaction", "compaction_summary":
		p.compaction("item", t)
	case "ghost_snapshot", "agent_message", "other":
		// undo snapshots, inter-agent text, placeholders: nothing to keep
	default:
		p.unknownType("response_item/" + it.Type)
	}
}

// facets are what one record adds to its response.
type facets struct {
	think bool
	text  int
	tools int
}

// modelOutput records one item of a model response as a KindLLM record.
// A response is the run of model items between two inputs (a prompt or a
// tool output); all its records share one MsgID. See doc.go.
func (p *Parser) modelOutput(t int64, f facets) {
	p.st.Compact, p.st.Prompt = "", ""
	p.st.TurnResp = true
	r := p.st.Resp
	if r == nil || r.Input {
		r = p.startResponse(t)
	}
	p.llmRecord(t, r, f)
}

// startResponse opens a new response at t.
func (p *Parser) startResponse(t int64) *response {
	p.st.RespN++
	r := &response{ID: p.msgID(p.st.RespN), T: t, Lat: -1}
	// Legacy records have no times of their own: latency is unknown there.
	if p.st.Form == "wrapper" && p.st.InputT > 0 && t >= p.st.InputT {
		r.Lat = t - p.st.InputT
	}
	p.st.Resp = r
	p.syncModel(t)
	return r
}

// llmRecord emits one KindLLM record of response r. Latency and, once
// known, usage are the response's and repeat on each of its records, so
// that whichever record a merge keeps carries them; the facets are this
// record's own.
func (p *Parser) llmRecord(t int64, r *response, f facets) {
	l := &event.LLM{MsgID: r.ID, LatencyMs: r.Lat, Thinking: f.think, ToolCalls: f.tools, TextChars: f.text}
	if u := r.Usage; u != nil {
		l.In, l.CW, l.CR, l.Out = u.In, u.CW, u.CR, u.Out
	}
	p.emit(event.Event{Kind: event.KindLLM, T: t, Model: p.st.Model, LLM: l})
}

func (p *Parser) sessionID() string {
	if p.src.Session != "" {
		return p.src.Session
	}
	return p.st.ID
}

// msgPrefix starts the ids of a session's responses; the thread's tail
// keeps ids apart when a child rollout becomes a lane of its parent's map.
func msgPrefix(session string) string {
	lane := LaneID(session)
	if lane == "" {
		lane = "sa-x"
	}
	return lane[3:] + ":"
}

// msgID names response n of the session; the prefix is worked out once.
func (p *Parser) msgID(n int) string {
	if s := p.sessionID(); s != p.prefixOf || p.prefix == "" {
		p.prefixOf, p.prefix = s, msgPrefix(s)
	}
	return p.prefix + strconv.Itoa(n)
}

// input marks a prompt or tool output: the response before it is complete,
// and the next model item starts a new one.
func (p *Parser) input(t int64) {
	p.st.InputT = t
	if p.st.Resp != nil {
		p.st.Resp.Input = true
	}
}

// closeResponse ends the response at a hard boundary (prompt, turn end,
// compaction, resume).
func (p *Parser) closeResponse() { p.st.Resp = nil }

// tokenCount turns the cumulative total of a token_count event into the
// usage of one response: the delta since the last total of the same
// counter. Repeats of a known total (rate-limit refreshes, turn starts) are
// skipped. A rollout can hold several counters: the thread's own, one that
// restarts from zero (0.77 after an interrupted turn), and a /review
// thread's, after which the thread's own resumes. A total continues the
// most recently used counter it does not go below, unless the step would
// be larger than one request can be (then the nearest counter below it);
// a total below every counter starts a new one. input includes cached input
// and cache writes, output includes reasoning: In = input - cached - cache
// writes, CW = cache writes, CR = cached, Out = output.
func (p *Parser) tokenCount(pl *item, t int64) {
	if pl.Info == nil {
		return // a rate-limit-only update
	}
	if last := pl.Info.Last; last != nil {
		p.st.LastCtx = last.Input + last.Output
	}
	tot := pl.Info.Total
	if tot == nil {
		return
	}
	d, ok := p.advance(*tot, pl.Info.Last, requestBound(pl.Info.Window))
	if !ok {
		return
	}
	// input_tokens includes both the cached reads and (since 2026) the
	// cache writes: each is taken out of the fresh input, never counted
	// twice.
	cr := min(max(d.Cached, 0), d.Input)
	cw := min(max(d.CacheWrite, 0), d.Input-cr)
	u := &tokenDelta{In: d.Input - cr - cw, CW: cw, CR: cr, Out: d.Output}
	if u.In+u.CW+u.CR+u.Out == 0 {
		return
	}
	r := p.st.Resp
	if r == nil || r.Usage != nil {
		// Builds up to 0.55 write the count before the response's items:
		// it opens the response they join.
		r = p.startResponse(t)
	}
	r.Usage = u
	p.llmRecord(t, r, facets{})
}

// maxCounters bounds the counters remembered.
const maxCounters = 4

// advance moves the counter that tot continues and returns the step; ok is
// false for a repeat of a known total.
func (p *Parser) advance(tot tokenUsage, last *tokenUsage, bound int64) (tokenUsage, bool) {
	cs := p.st.Counters
	for i, c := range cs {
		if c == tot {
			// most recently used last, moved in place
			copy(cs[i:], cs[i+1:])
			cs[len(cs)-1] = c
			return tokenUsage{}, false
		}
	}
	below := func(c tokenUsage) bool { return c.Input <= tot.Input && c.Output <= tot.Output }
	step := func(c tokenUsage) int64 { return tot.Input + tot.Output - c.Input - c.Output }
	pick := -1
	if n := len(cs); n > 0 && below(cs[n-1]) && step(cs[n-1]) <= bound {
		pick = n - 1
	} else {
		for i, c := range cs {
			if below(c) && (pick < 0 || step(c) < step(cs[pick])) {
				pick = i
			}
		}
	}
	var d tokenUsage
	if pick < 0 {
		// A counter this rollout has not seen: it starts from zero (a
		// restart, a review thread), or from history this rollout does not
		// hold (a fork that references its parent's history), where only
		// the last request is this rollout's.
		d = tot
		if last != nil && last.Input <= tot.Input && last.Output <= tot.Output && last.Cached <= tot.Cached {
			d = *last
		}
		if len(cs) >= maxCounters {
			cs = cs[1:]
		}
	} else {
		c := cs[pick]
		d = tokenUsage{Input: tot.Input - c.Input, Cached: tot.Cached - c.Cached, CacheWrite: tot.CacheWrite - c.CacheWrite,
			Output: tot.Output - c.Output}
		cs = append(cs[:pick], cs[pick+1:]...)
	}
	p.st.Counters = append(cs, tot)
	return d, true
}

// requestBound is the most one request can add to a counter: its input
// fits the context window, plus room for output.
func requestBound(window int64) int64 {
	if window <= 0 {
		return 1_000_000
	}
	return 2*window + 200_000
}

// userPrompt emits a real prompt's shape.
//
// In a spawned thread the "prompts" are the parent agent's instructions
// (spawn message, send_input), not the user's, and in review mode they are
// the review instructions Codex writes: they end the response before them
// like a prompt does, but are not user turns.
func (p *Parser) userPrompt(t int64, text string, images int) {
	p.closeResponse()
	p.input(t)
	p.st.Compact = ""
	p.st.TurnResp = false
	if p.st.Sub || p.st.Review {
		return
	}
	p.emit(event.Event{Kind: event.KindUser, T: t, User: &event.User{
		Chars: utf8.RuneCountInString(text), Images: images, URLs: redact.CountURLs(text),
	}})
}

// syntheticPrompts start user-role messages that Codex injects (context,
// instructions, notices) rather than the user typing them.
var syntheticPrompts = []string{
	"<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
	"<INSTRUCTIONS>", "<turn_aborted>", "<permissions instructions>", "<skill>",
	"<user_shell_command>", "<subagent_notification>", "<collaboration_mode>",
	"<personality_spec>", "<model_switch>",
}

func isSynthetic(text string) bool {
	s := strings.TrimLeft(text, " \t\r\n")
	for _, pre := range syntheticPrompts {
		if strings.HasPrefix(s, pre) {
			return true
		}
	}
	return false
}

// wholeChat handles the legacy user message and the chat-completions items
// of the single-JSON form ({role, content, tool_calls, tool_call_id}).
func (p *Parser) wholeChat(it *item, t int64) {
	switch it.Role {
	case "user":
		text, images := contentText(it.Content)
		if isSynthetic(text) {
			if !p.st.HasCWD {
				p.cwdFromContext(it.Content)
			}
			return
		}
		p.userPrompt(t, text, images)
	case "assistant":
		var f facets
		var reasoning string
		if json.Unmarshal(it.Reasoning, &reasoning) == nil && reasoning != "" {
			f.think = true
		}
		text, _ := contentText(it.Content)
		f.text = utf8.RuneCountInString(text)
		f.tools = len(it.ToolCalls)
		if f.think || f.text > 0 || f.tools > 0 {
			p.modelOutput(t, f)
		}
		for _, tc := range it.ToolCalls {
			p.functionCall(tc.Function.Name, "", tc.Function.Arguments, tc.ID, t)
		}
	case "tool":
		p.output(it.ToolCallID, it.Content, jsonscan.Len{}, t)
	case "system", "developer":
	default:
		p.unknownType("chat/" + it.Role)
	}
}

// wholeItem handles one item of the single-JSON form.
func (p *Parser) wholeItem(raw json.RawMessage) {
	var it item
	if err := json.Unmarshal(raw, &it); err != nil && !isTypeError(err) {
		p.unknownType("invalid item")
		return
	}
	it.normaliseIDs()
	p.bare(&it)
}

// contentText joins the text parts of a message content (a string or an
// array of parts) and counts its images. The text is only measured.
func contentText(raw json.RawMessage) (string, int) {
	if len(raw) == 0 {
		return "", 0
	}
	if raw[0] == '"' {
		s, _ := jsonscan.ValidString(raw)
		return s, 0
	}
	var parts []contentPart
	if raw[0] == '[' {
		parts = contentParts(raw)
	} else if raw[0] == '{' {
		var one contentPart
		if json.Unmarshal(raw, &one) == nil {
			parts = append(parts, one)
		}
	}
	var b strings.Builder
	images := 0
	for _, pt := range parts {
		switch {
		case isImagePart(pt.Type):
			images++
		case pt.Text != "":
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(pt.Text)
		}
	}
	return b.String(), images
}

var partFields = jsonscan.NewFields(
	jsonscan.Field[contentPart]{Name: "type", Set: word(func(c *contentPart) *string { return &c.Type })},
	jsonscan.Field[contentPart]{Name: "text", Set: jsonscan.Text(func(c *contentPart) *string { return &c.Text })},
)

// contentParts reads an array of content parts, valid JSON (a member of a
// decoded line), as json.Unmarshal would,
// walking it when it has the usual shape (texts are decoded, the rest is
// stepped over).
func contentParts(raw json.RawMessage) []contentPart {
	parts := []contentPart{}
	ok := jsonscan.ArrayValid(raw, func(elem []byte) bool {
		parts = append(parts, contentPart{})
		switch elem[0] {
		case 'n':
			return true
		case '{':
			return partFields.FillValid(&parts[len(parts)-1], elem)
		}
		return false
	})
	if !ok {
		parts = nil
		_ = json.Unmarshal(raw, &parts)
	}
	return parts
}

// measuredPart is a content part with its text left where it lies.
type measuredPart struct {
	Type string
	Text []byte
}

var measuredPartFields = jsonscan.NewFields(
	jsonscan.Field[measuredPart]{Name: "type", Set: word(func(c *measuredPart) *string { return &c.Type })},
	jsonscan.Field[measuredPart]{Name: "text", Set: func(c *measuredPart, v []byte) bool { c.Text = v; return true }},
)

// textRunes is utf8.RuneCountInString of contentText's text, counted
// where the text lies when the content is a string or an array of parts
// the walk reads.
func textRunes(raw json.RawMessage) int {
	if len(raw) > 0 && raw[0] == '"' {
		if n, ok := jsonscan.StringRunes(raw); ok {
			return n
		}
	}
	if len(raw) > 0 && raw[0] == '[' {
		n, texts := 0, 0
		// One part for all: the walk's target escapes, and would be
		// allocated for each part.
		var pt measuredPart
		ok := jsonscan.ArrayValid(raw, func(elem []byte) bool {
			pt = measuredPart{}
			switch elem[0] {
			case 'n':
				return true
			case '{':
				if !measuredPartFields.FillValid(&pt, elem) {
					return false
				}
			default:
				return false
			}
			if isImagePart(pt.Type) || len(pt.Text) == 0 || pt.Text[0] != '"' {
				return true // an image, or no text (a null or another type is a type error: empty)
			}
			runes, ok := jsonscan.StringRunes(pt.Text)
			if runes > 0 {
				if texts > 0 {
					n++ // the newline that joins the texts
				}
				n += runes
				texts++
			}
			return ok
		})
		if ok {
			return n
		}
	}
	text, _ := contentText(raw)
	return utf8.RuneCountInString(text)
}

func isImagePart(typ string) bool {
	switch typ {
	case "input_image", "image", "image_url", "local_image":
		return true
	}
	return false
}

// cwdFromContext reads the <cwd> of an injected <environment_context>, the
// only place legacy rollouts name their working directory.
func (p *Parser) cwdFromContext(raw json.RawMessage) {
	text, _ := contentText(raw)
	s := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(s, "<environment_context>") {
		return
	}
	_, rest, ok := strings.Cut(s, "<cwd>")
	if !ok {
		return
	}
	cwd, _, ok := strings.Cut(rest, "</cwd>")
	if cwd = strings.TrimSpace(cwd); ok && cwd != "" && !strings.ContainsAny(cwd, "\n<>") {
		p.setCWD(cwd)
	}
}
