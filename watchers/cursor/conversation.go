package cursor

import (
	"encoding/json"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
)

// Conversation is one composer of a SQLite store (or one tab of the legacy
// chat panel, or one cursor-agent chat), as the neutral events of one
// session. UpdatedMs is the last time the conversation changed, for the
// caller's change detection and idle logic.
type Conversation struct {
	NativeID  string
	Events    []event.Event
	UpdatedMs int64
}

// convo is what a source knows about one conversation before it becomes
// events.
type convo struct {
	id        string
	parent    string // parent composer of a subagent composer
	createdMs int64
	updatedMs int64
	model     string // composer-wide model (modelConfig), if any
	status    string // composer status: completed, aborted, error, …
	cwd       string // workspace folder, when the store says it
	bubbles   []*bubble
}

// build turns a conversation's bubbles into events, in the composer's
// canonical order.
//
//   - A user bubble (type 1) with text or images is a KindUser.
//   - Each assistant bubble (type 2) is a KindLLM record. Cursor splits one
//     model response over several bubbles (thinking, text, one bubble per
//     tool call), so records share a MsgID, the id of the response's first
//     bubble: a response starts after a user bubble, and at a text or
//     thinking bubble that follows a tool bubble (the tool's result went
//     back to the model). The builder merges the records of one MsgID.
//     The model is the bubble's modelInfo, else the previous bubble's,
//     else the composer's modelConfig (a KindModel marks each change);
//     tokens come from a non-zero tokenCount; latency from timingInfo.
//   - A bubble with toolFormerData.name adds a KindCall and, once its
//     status is final, a KindResult in the same bubble.
//
// Times: a bubble's createdAt, else its timingInfo send time, else (a user
// bubble) the send time of the request that follows it, else the last
// known time (so that order is kept); before any, the first known time,
// else the composer's createdAt. Times never go backwards within a
// conversation.
func (cv convo) build() Conversation {
	if !cv.hasContent() {
		return Conversation{}
	}
	paths := redact.NewPaths()
	if cv.cwd != "" {
		paths.SetCWD(cv.cwd)
	} else if wd := terminalCWD(cv.bubbles); wd != "" {
		// The terminal tool reports the directory it ran in: the best
		// evidence of the workspace a global composer belongs to.
		paths.SetCWD(wd)
	}

	times := cv.times()
	cur := cv.createdMs
	for _, t := range times {
		if t > 0 {
			cur = t
			break
		}
	}
	// The bounds serve only a conversation whose bubbles carry no time.
	sess := &event.Session{NativeID: cv.id, AgentTool: AgentTool, Role: "root",
		StartT: cv.createdMs, EndT: max(cv.updatedMs, cv.createdMs)}
	if cv.parent != "" {
		sess.Role, sess.ParentNativeID = "subagent", cv.parent
	}
	out := []event.Event{{Kind: event.KindSession, T: cur, Session: sess}}
	out = appendRepos(paths, cur, "", out)

	var model, group string
	prevTool := false
	seenCalls := map[string]bool{}
	last := cur
	for i, b := range cv.bubbles {
		if t := times[i]; t > cur {
			cur = t
		}
		switch b.Type {
		case 1:
			group = ""
			chars, urls := b.promptChars, b.promptURLs
			if chars == 0 && len(b.Images) == 0 {
				continue
			}
			out = append(out, event.Event{Kind: event.KindUser, T: cur,
				User: &event.User{Chars: chars, Images: len(b.Images), URLs: urls}})
		case 2:
			tf := b.step
			if group == "" || (prevTool && tf == nil) {
				group = b.BubbleID
				if group == "" {
					group = "r" + itoa(len(out))
				}
			}
			prevTool = tf != nil
			// A bubble without a model keeps the model of the bubbles
			// before it; the composer's setting covers the first ones.
			m := b.model()
			if m == "" {
				m = model
			}
			if m == "" {
				m = cv.model
			}
			if m != "" && m != model {
				model = m
				out = append(out, event.Event{Kind: event.KindModel, T: cur, Model: m})
			}
			llm := &event.LLM{MsgID: group, LatencyMs: b.latency(), Thinking: b.thought,
				TextChars: b.textRunes}
			if tc := b.TokenCount; tc != nil {
				llm.In, llm.Out = tokens(tc.InputTokens), tokens(tc.OutputTokens)
			}
			if tf != nil {
				llm.ToolCalls = 1
			}
			out = append(out, event.Event{Kind: event.KindLLM, T: cur, Model: m, LLM: llm})
			if tf != nil {
				out = toolEvents(tf, b.BubbleID, seenCalls, paths, cur, out)
			}
		}
		last = cur
	}
	// The composer's status is the state of its latest generation: an
	// aborted or failed one ends the conversation as it stands.
	switch cv.status {
	case "aborted", "cancelled":
		out = append(out, event.Event{Kind: event.KindError, T: last,
			Error: &event.Error{Source: "orchestration", Class: "interrupted"}})
	case "error":
		out = append(out, event.Event{Kind: event.KindError, T: last,
			Error: &event.Error{Source: "llm", Class: "api_error"}})
	}
	upd := cv.updatedMs
	if upd == 0 {
		upd = last
	}
	return Conversation{NativeID: cv.id, Events: out, UpdatedMs: upd}
}

// times returns each bubble's own time, or 0. A user bubble of the builds
// that did not time user bubbles takes the send time of the request it
// triggered, the next bubble's (the composer's createdAt is when the chat
// was opened, often long before).
func (cv convo) times() []int64 {
	ts := make([]int64, len(cv.bubbles))
	for i, b := range cv.bubbles {
		ts[i] = b.time()
	}
	for i, b := range cv.bubbles {
		if ts[i] == 0 && b.Type == 1 && i+1 < len(ts) && cv.bubbles[i+1].Type == 2 {
			ts[i] = ts[i+1]
		}
	}
	return ts
}

// hasContent reports whether any bubble is a user or assistant message:
// Cursor keeps many empty draft composers.
func (cv convo) hasContent() bool {
	for _, b := range cv.bubbles {
		if b.Type == 1 || b.Type == 2 {
			return true
		}
	}
	return false
}

func terminalCWD(bubbles []*bubble) string {
	for _, b := range bubbles {
		if b.step != nil && b.step.cwd != "" {
			return b.step.cwd
		}
	}
	return ""
}

// toolEvents emits the call of a tool bubble and, when its status is
// final, its result.
func toolEvents(st *toolStep, bubbleID string, seen map[string]bool, paths *redact.Paths, t int64, out []event.Event) []event.Event {
	// The builder pairs calls and results by id: a call without one, or
	// with one an earlier bubble used, is named by its bubble.
	id := st.callID
	if id == "" || seen[id] {
		id = "bubble:" + bubbleID
	}
	seen[id] = true
	c, out := buildCall(callSpec{id: id, name: st.name, inputs: st.inputs}, paths, t, "", out)
	out = append(out, event.Event{Kind: event.KindCall, T: t, Call: &c})
	if r := st.result(&c, paths); r != nil {
		r.CallID = id
		out = append(out, event.Event{Kind: event.KindResult, T: t, Result: r})
	}
	return out
}

// result is the outcome of a tool step, or nil while it runs.
func (st *toolStep) result(c *event.Call, paths *redact.Paths) *event.Result {
	r := &event.Result{OutBytes: st.outBytes, ExitCode: st.exitCode}
	switch st.status {
	case "completed", "success", "succeeded", "done":
	case "error", "failed", "failure":
		r.Err, r.ErrClass = true, st.errClass
		return r
	case "cancelled", "canceled", "aborted":
		r.Err, r.ErrClass = true, "interrupted"
		return r
	case "rejected":
		r.Err, r.ErrClass = true, "permission_denied"
		return r
	default: // running, loading, pending, or unknown: not over yet
		return nil
	}
	switch {
	case st.rejected:
		r.Err, r.ErrClass = true, "permission_denied"
	case r.ExitCode != nil && *r.ExitCode != 0:
		r.Err, r.ErrClass = true, "exit_code"
	case c.VCS != nil && st.output != "":
		confirm(r, c, st.output, paths)
	}
	return r
}

// confirm reduces a VCS command's output to the identifiers it confirms.
func confirm(r *event.Result, c *event.Call, output string, paths *redact.Paths) {
	v := c.VCS
	switch {
	case v.Provider == "git" && v.Action == "commit":
		if cm := redact.ConfirmCommit(output); cm != nil {
			if cm.Repo == "" {
				cm.Repo = paths.CWDRepo()
			}
			r.Commit = cm
		}
	case strings.HasPrefix(v.Action, "pr_") || strings.HasPrefix(v.Action, "mr_"):
		if pr := redact.ConfirmPR(output, v.Action[3:]); pr != nil {
			r.PR = pr
		}
	}
}

// rawLen is the byte length of a result: of the text inside a JSON string,
// or of the JSON value itself.
func rawLen(raw json.RawMessage) int64 {
	raw = trimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return int64(len(s))
		}
	}
	return int64(len(raw))
}

// rawText is the text of a JSON string, or the JSON itself; for
// classification only.
func rawText(raw json.RawMessage) string {
	raw = trimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// tokens accepts a token count only if it is a plausible one.
func tokens(f float64) int64 {
	if f < 1 || f > 1e12 {
		return 0
	}
	return int64(f)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
