package opencode

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/toolkit"
)

// convert turns the sessions of a store and their messages into one
// conversation per root session. A child session (parentID, written by
// the task tool) is a lane of its root's map, not a map of its own: its
// work is already part of what its parent did, and counting it twice
// would double the user's totals.
func convert(sessions []*sessionRec, msgs map[string][]messageRec) []watchers.Conversation {
	roots, children := tree(sessions)
	out := make([]watchers.Conversation, 0, len(roots))
	for _, r := range roots {
		out = append(out, convertRoot(r, msgs, children))
	}
	return out
}

// tree orders the root sessions (by creation, then id) and lists each
// session's children in the same order. A session whose parent is not in
// the store, or is itself, is a root.
func tree(sessions []*sessionRec) ([]*sessionRec, map[string][]*sessionRec) {
	byID := make(map[string]*sessionRec, len(sessions))
	for _, s := range sessions {
		byID[s.ID] = s
	}
	children := map[string][]*sessionRec{}
	var roots []*sessionRec
	for _, s := range sessions {
		if s.Parent != "" && s.Parent != s.ID && byID[s.Parent] != nil {
			children[s.Parent] = append(children[s.Parent], s)
		} else {
			roots = append(roots, s)
		}
	}
	order := func(list []*sessionRec) {
		sort.SliceStable(list, func(i, j int) bool {
			if list[i].Time.Created != list[j].Time.Created {
				return list[i].Time.Created < list[j].Time.Created
			}
			return list[i].ID < list[j].ID
		})
	}
	order(roots)
	for _, l := range children {
		order(l)
	}
	return roots, children
}

// family lists a root session and every session below it.
func family(root *sessionRec, children map[string][]*sessionRec) []*sessionRec {
	out := []*sessionRec{root}
	seen := map[string]bool{root.ID: true}
	for i := 0; i < len(out); i++ {
		for _, ch := range children[out[i].ID] {
			if !seen[ch.ID] {
				seen[ch.ID] = true
				out = append(out, ch)
			}
		}
	}
	return out
}

// convertRoot builds the conversation of one root session.
func convertRoot(r *sessionRec, msgs map[string][]messageRec, children map[string][]*sessionRec) watchers.Conversation {
	c := &conv{paths: redact.NewPaths(), msgs: msgs, children: children, launches: map[string]launch{}, seen: map[string]bool{}}
	c.emit(event.Event{Kind: event.KindSession, T: r.Time.Created, Session: &event.Session{
		NativeID: r.ID, AgentTool: Tool, AgentVersion: watchers.Ident(r.Version)}})
	c.session(r, "")
	return watchers.Conversation{NativeID: r.ID, Events: c.out, UpdatedMs: c.updated}
}

// launch is the call that started a child session.
type launch struct {
	call, subagentType string
}

// conv builds the events of one root session and its lanes.
type conv struct {
	paths    *redact.Paths
	msgs     map[string][]messageRec
	children map[string][]*sessionRec
	launches map[string]launch // child session id -> its task call
	seen     map[string]bool   // sessions already walked (a cycle of parents is cut)
	out      []event.Event
	lane     string
	updated  int64
}

func (c *conv) emit(e event.Event) {
	e.Agent = c.lane
	c.out = append(c.out, e)
}

// flushRepos declares the repos the resolver found since last time.
func (c *conv) flushRepos(t int64) {
	for _, r := range c.paths.NewRepos() {
		c.emit(event.Event{Kind: event.KindRepo, T: t, Repo: &r})
	}
}

// session walks one session's messages as lane, then its children, each
// as a lane of its own (the format has no nesting below a subagent).
func (c *conv) session(s *sessionRec, lane string) {
	if c.seen[s.ID] {
		return
	}
	c.seen[s.ID] = true
	c.lane = lane
	c.updated = max(c.updated, s.Time.Updated, s.Time.Created)
	c.setCWD(s.Dir, c.recordedRoot(s.ID))
	c.flushRepos(s.Time.Created)
	forked := forkOf(c.msgs[s.ID], s)
	for _, m := range c.msgs[s.ID] {
		if forked && copied(m, s) {
			continue
		}
		c.message(m)
	}
	for _, ch := range c.children[s.ID] {
		id := watchers.LaneID(ch.ID)
		l := c.launches[ch.ID]
		c.lane = id
		c.emit(event.Event{Kind: event.KindLane, T: ch.Time.Created, Lane: &event.Lane{
			SubagentType: l.subagentType, LaunchCallID: l.call}})
		c.session(ch, id)
	}
}

// copied reports whether a message of a session was made before the
// session: a fork (opencode run --session ID --fork) begins with a copy of
// its parent's messages, each keeping its original time. The copies stay
// the parent's, as a forked Claude Code session's copied lines do: counted
// in the fork too, they would bill the parent's requests twice (OpenCode's
// own session totals count them in both). A session keeps no mark of
// being a fork; a message older than its session is one.
func copied(m messageRec, s *sessionRec) bool {
	return s.Time.Created > 0 && m.Created > 0 && m.Created < s.Time.Created
}

// forkOf reports whether a session is a fork that went on: it holds
// messages older than itself (copies) and at least one of its own. A
// session all of whose messages are older than itself is read whole: one
// imported from elsewhere may keep its messages' times and take a new
// creation time, and a fork with no message of its own yet is its
// parent's conversation alone until it has one.
func forkOf(msgs []messageRec, s *sessionRec) bool {
	copies, own := false, false
	for _, m := range msgs {
		if copied(m, s) {
			copies = true
		} else {
			own = true
		}
	}
	return copies && own
}

// setCWD sets the working directory with the root OpenCode recorded for
// it, which outlives the directory: a deleted worktree, a moved clone or a
// store from another machine keeps its repository's root, and a directory
// outside git (root "/", OpenCode's global project) is not taken for a
// repository. With no root recorded the resolver infers as for any agent.
func (c *conv) setCWD(cwd, root string) {
	switch root {
	case "":
		c.paths.SetCWD(cwd)
	case "/":
		c.paths.SetCWDNoRepo(cwd)
	default:
		// OpenCode keeps no remote; the root's name is its base name.
		c.paths.DeclareRepo(root, "")
		c.paths.SetCWD(cwd)
	}
}

// recordedRoot is the first project root the session's messages record
// (only assistant messages carry a path), "" when none does. The session's
// directory is set before its messages are read, so the root is looked up
// ahead: set later, the directory would already have been taken for a
// repository of its own.
func (c *conv) recordedRoot(session string) string {
	for _, m := range c.msgs[session] {
		var info struct {
			Path msgPath `json:"path"`
		}
		if json.Unmarshal(m.Data, &info) == nil && info.Path.Root != "" {
			return info.Path.Root
		}
	}
	return ""
}

// message turns one message and its parts into events.
func (c *conv) message(m messageRec) {
	var info msgInfo
	if json.Unmarshal(m.Data, &info) != nil {
		return
	}
	t := info.Time.Created
	if t == 0 {
		t = m.Created
	}
	c.updated = max(c.updated, t, info.Time.Completed)
	parts := make([]partInfo, 0, len(m.Parts))
	for _, raw := range m.Parts {
		var p partInfo
		if json.Unmarshal(raw, &p) == nil {
			parts = append(parts, p)
		}
	}
	switch info.Role {
	case "user":
		c.user(t, parts)
	case "assistant":
		c.assistant(m.ID, t, &info, parts)
	}
}

// user emits a prompt's shape, and a compaction the user message asks for.
func (c *conv) user(t int64, parts []partInfo) {
	var u event.User
	prompt := false
	for _, p := range parts {
		switch p.Type {
		case "text":
			if p.Synthetic || p.Ignored {
				continue
			}
			prompt = true
			u.Chars += len([]rune(p.Text))
			u.URLs += redact.CountURLs(p.Text)
		case "file":
			prompt = true
			if toolkit.ImageMIME(p.Mime) {
				u.Images++
			}
		case "compaction":
			trigger := "manual"
			if p.Auto {
				trigger = "auto"
			}
			c.emit(event.Event{Kind: event.KindCompaction, T: t, Compact: &event.Compaction{Trigger: trigger}})
		}
	}
	if prompt {
		c.emit(event.Event{Kind: event.KindUser, T: t, User: &u})
	}
}

// step is one model request inside an assistant message: what lies
// between a step-start part and its step-finish.
type step struct {
	n        int
	text     int
	thinking bool
	tools    []partInfo
	respT    int64
}

// assistant emits the requests of an assistant message (one per step, or
// the message itself when it has no steps), their tool calls, and the
// message's error.
func (c *conv) assistant(id string, t int64, info *msgInfo, parts []partInfo) {
	if info.Path.Cwd != "" {
		c.setCWD(info.Path.Cwd, info.Path.Root)
		c.flushRepos(t)
	}
	model := watchers.Ident(info.ModelID)
	reqT := t
	cur := &step{}
	steps := 0
	finish := func(tk *tokens, stop string, done bool) {
		if !done && cur.text == 0 && !cur.thinking && len(cur.tools) == 0 && steps > 0 {
			return
		}
		respT := cur.respT
		lat := int64(-1)
		if respT == 0 {
			respT = max(reqT, info.Time.Completed)
		} else if reqT > 0 && respT >= reqT {
			lat = respT - reqT
		}
		// The stop reason is an identifier (stop, tool-calls, length),
		// not whatever text a damaged or hostile row holds there.
		llm := &event.LLM{MsgID: id + "#" + strconv.Itoa(cur.n), LatencyMs: lat, Stop: watchers.Ident(stop), Thinking: cur.thinking,
			ToolCalls: len(cur.tools), TextChars: cur.text}
		if tk != nil {
			llm.In, llm.CW, llm.CR, llm.Out = tk.Input, tk.Cache.Write, tk.Cache.Read, tk.Output+tk.Reasoning
		}
		c.emit(event.Event{Kind: event.KindLLM, T: respT, Model: model, LLM: llm})
		end := respT
		for _, p := range cur.tools {
			end = max(end, c.tool(respT, p))
		}
		reqT = end
		steps++
		cur = &step{n: steps}
	}
	sawFinish := false
	for _, p := range parts {
		switch p.Type {
		case "step-start":
			if cur.text > 0 || cur.thinking || len(cur.tools) > 0 {
				finish(nil, "", false)
			}
		case "text":
			if p.Synthetic || p.Ignored {
				continue
			}
			cur.text += len([]rune(p.Text))
			cur.mark(p.Time.Start)
		case "reasoning":
			cur.thinking = true
			cur.mark(p.Time.Start)
		case "tool":
			cur.tools = append(cur.tools, p)
			cur.mark(p.State.Time.Start)
		case "step-finish":
			sawFinish = true
			finish(p.Tokens, info.Finish, true)
		case "retry":
			c.emit(event.Event{Kind: event.KindError, T: max(p.Time.Created, t), Error: &event.Error{
				Source: "llm", Class: apiClass(p.Error), Retry: p.Attempt}})
		}
	}
	switch {
	case !sawFinish:
		// An older message without steps, or one still streaming: the
		// message is the request and its tokens are the message's.
		finish(info.Tokens, info.Finish, true)
	case cur.text > 0 || cur.thinking || len(cur.tools) > 0:
		finish(nil, "", false) // a step still running
	}
	if info.Error != nil {
		class := apiClass(info.Error)
		src := "llm"
		if info.Error.Name == "MessageAbortedError" {
			src, class = "orchestration", "interrupted"
		}
		c.emit(event.Event{Kind: event.KindError, T: max(info.Time.Completed, t), Error: &event.Error{Source: src, Class: class}})
	}
	if info.Finish != "" && info.Finish != "tool-calls" && info.Time.Completed > 0 {
		c.emit(event.Event{Kind: event.KindTurnEnd, T: info.Time.Completed})
	}
}

// mark records the time of the first thing a response produced.
func (s *step) mark(t int64) {
	if t > 0 && (s.respT == 0 || t < s.respT) {
		s.respT = t
	}
}

// apiClass classes an error record by its name, status and message (read
// here, never kept).
func apiClass(e *struct {
	Name string `json:"name"`
	Data struct {
		StatusCode int    `json:"statusCode"`
		Message    string `json:"message"`
	} `json:"data"`
}) string {
	if e == nil {
		return "api_error"
	}
	switch e.Name {
	case "ProviderAuthError":
		return "auth"
	case "MessageAbortedError":
		return "interrupted"
	case "MessageOutputLengthError":
		return "bad_request"
	}
	text := e.Data.Message
	if e.Data.StatusCode != 0 {
		text = strconv.Itoa(e.Data.StatusCode) + " " + text
	}
	return redact.APIErrorClass(text)
}
