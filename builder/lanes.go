package builder

import (
	"github.com/agentmap/agentmap/builder/event"
)

// unknownModel names the model of a request, or another identifier the
// format requires, that the source did not give.
const unknownModel = "unknown"

// walkLanes turns each lane's records, in lane order, into nodes: one per
// map event, with model switches where the lane's model changes, merged
// model requests, calls paired with their results and the confirmed
// outputs that follow them.
func (b *build) walkLanes() {
	for _, l := range b.lanes {
		b.walkLane(l, l.recs)
	}
	b.clientTotals()
	for _, l := range b.lanes {
		for _, n := range l.nodes {
			if n.call != nil {
				b.complete(n)
			}
		}
	}
	b.linkLanes()
}

func (b *build) walkLane(l *lane, idx []int) {
	cur := ""
	add := func(n *node) *node {
		n.lane = l
		n.seq = -1
		if n.ev.Model == "" && n.inner == "" {
			n.ev.Model = cur
		}
		l.nodes = append(l.nodes, n)
		return n
	}
	switchTo := func(i int, model string) {
		if model == "" || model == cur {
			return
		}
		if cur != "" {
			add(b.newNode(node{idx: i, ev: Event{Kind: "model_switch", T: b.t(i), From: cur, To: model, Model: model}}))
		}
		cur = model
	}
	for _, i := range idx {
		e := &b.in[i]
		t := b.t(i)
		switch e.Kind {
		case event.KindRepo:
			if e.Repo != nil && e.Repo.Key != "" {
				add(b.newNode(node{idx: i, inner: "repo", repoKey: e.Repo.Key, ev: Event{T: t}}))
			}
		case event.KindTurnEnd:
			add(b.newNode(node{idx: i, inner: "turn_end", ev: Event{T: t}}))
		case event.KindModel:
			switchTo(i, e.Model)
		case event.KindUser:
			l.lastActivity = i
			// Only the main lane has user turns: a subagent's first
			// message is written by the parent agent, not by the user.
			if l.id != "" || e.User == nil {
				continue
			}
			add(b.newNode(node{idx: i, ev: Event{Kind: "user", T: t,
				Chars: e.User.Chars, Images: e.User.Images, URLs: e.User.URLs}}))
		case event.KindLLM:
			if e.LLM != nil && e.LLM.Side != "" {
				// A side request is billed but not part of the lane's
				// flow: its own model, no switch, no activity.
				if n := b.llmNode(i, e); n != nil {
					n.side = true
					if n.ev.Model == "" {
						n.ev.Model = unknownModel
					}
					add(n)
				}
				continue
			}
			// A later record of the same response (Claude writes one line
			// per content block, all with the message id) is no sign that
			// the agent went on: only a new request is.
			if e.LLM == nil || e.LLM.MsgID == "" || b.groups[groupKey{e.Agent, e.LLM.MsgID}].first == i {
				l.lastActivity = i
			}
			if e.LLM == nil {
				continue
			}
			n := b.llmNode(i, e)
			if n == nil {
				continue
			}
			switchTo(i, n.ev.Model)
			if n.ev.Model == "" {
				n.ev.Model = cur
			}
			if n.ev.Model == "" {
				// A request always has a model; the source did not say which.
				n.ev.Model = unknownModel
			}
			if l.firstModel == "" && n.ev.Model != unknownModel {
				l.firstModel = n.ev.Model
			}
			add(n)
		case event.KindCall:
			if e.Call == nil {
				continue
			}
			if root := b.calls[e.Call.Continues]; e.Call.Continues != "" && root != nil {
				// A continuation (Codex write_stdin) is the same process:
				// it is no event of its own, its result completes the root.
				if e.Call.ID != "" {
					b.calls[e.Call.ID] = root
				}
				root.conts = append(root.conts, i)
				continue
			}
			n := add(b.callNode(i, t, e.Call))
			if e.Call.ID != "" {
				if _, dup := b.calls[e.Call.ID]; !dup {
					b.calls[e.Call.ID] = n
				}
			}
		case event.KindError:
			if e.Error == nil {
				continue
			}
			n := add(b.newNode(node{idx: i, ev: Event{Kind: "error", T: t, Err: true,
				Source: e.Error.Source, ErrClass: e.Error.Class, Hook: e.Error.Hook,
				HookEvent: e.Error.HookEvent, SrcUUID: e.Error.SrcUUID, Retry: e.Error.Retry}}))
			if n.ev.ErrClass == "" {
				// The error-event classes have no "other": a failed hook
				// is a hook_error, anything else a generic api_error.
				n.ev.ErrClass = "api_error"
				if e.Error.Source == "hook" {
					n.ev.ErrClass = "hook_error"
				}
			}
			n.refCall = e.Error.RefCallID
		case event.KindCompaction:
			if e.Compact == nil {
				continue
			}
			add(b.newNode(node{idx: i, ev: Event{Kind: "compaction", T: t, Trigger: e.Compact.Trigger,
				PreTokens: e.Compact.PreTokens, PostTokens: e.Compact.PostTokens, Ms: e.Compact.Ms}}))
		}
	}
}

// llmNode makes the request node at the first record of its MsgID group,
// and nil for the group's later records.
func (b *build) llmNode(i int, e *event.Event) *node {
	g := &llmGroup{first: i}
	if e.LLM.MsgID != "" {
		g = b.groups[groupKey{e.Agent, e.LLM.MsgID}]
		if g.first != i {
			return nil
		}
	} else {
		g.add(i, e)
	}
	u := g.usage
	n := b.newNode(node{idx: i, ev: Event{Kind: "llm", T: b.t(i), Model: g.model,
		In: u.In, CW: u.CW, CR: u.CR, Out: u.Out, Stop: g.stop, Thinking: g.thinking,
		ToolCalls: g.toolCalls, TextChars: g.textChars}, priced: requestUsage(u)})
	// The first record's latency: the request started when its first
	// line's input was sent. 0 and -1 are unknown.
	if lat := e.LLM.LatencyMs; lat > 0 {
		n.ev.Latency = b.int64p(lat)
	}
	return n
}

func (b *build) callNode(i int, t int64, c *event.Call) *node {
	kind := c.Kind
	if !isCallKind(kind) {
		kind = "tool"
	}
	n := b.newNode(node{idx: i, call: c, ev: Event{Kind: kind, T: t, Cat: c.Cat}})
	if n.ev.Cat == "" {
		n.ev.Cat = defaultCat(kind)
	}
	switch kind {
	case "mcp":
		n.ev.Server = orUnknown(c.Server)
		n.ev.Tool = c.MCPTool
		if n.ev.Tool == "" {
			n.ev.Tool = orUnknown(c.Tool)
		}
	case "skill":
		n.ev.Skill = orUnknown(c.Skill)
	case "subagent":
		n.ev.SubagentType = c.SubagentType
	case "web":
		n.ev.Host = orUnknown(c.Host)
	default:
		n.ev.Tool = orUnknown(c.Tool)
		if kind == "exec" || kind == "verify" {
			n.ev.Verb = c.Verb
		}
		n.targets = c.Targets
		if c.VCS != nil {
			v := VCS(*c.VCS)
			n.ev.VCS = &v
		}
	}
	return n
}

// orUnknown fills an identifier the format requires but the source did not
// give (an MCP call without its server, a skill without its name).
func orUnknown(id string) string {
	if id == "" {
		return unknownModel
	}
	return id
}

func defaultCat(kind string) string {
	switch kind {
	case "read", "search", "edit":
		return "file"
	case "exec", "verify":
		return "shell"
	}
	return kind // mcp, subagent, skill, web, tool
}
