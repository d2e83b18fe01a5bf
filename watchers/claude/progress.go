package claude

import (
	"encoding/json"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// A subagent's model requests are billed whether or not its own file is
// here. Claude Code writes each line of a subagent's transcript into the
// subagent's file and, in many versions, into the parent's transcript too,
// as the data of an agent_progress line, with the same message and request
// ids. Many logs are the parent's file alone (a copy of the main
// transcript, a subagent file deleted or never written), so the parent's
// copies of the subagent's responses become requests of its lane, marked
// Relayed: the builder drops them where a log of the session holds the
// response itself (builder dropRelayed), so that each request counts once
// whichever file was read first.
//
// Of a relayed line only what a request needs is read: the agent, the
// launching call, the response's ids, model, usage and time. Its content,
// the prompt and the normalised conversation some versions add are stepped
// over by the walk of the line, never decoded.

// progressData is the data of a progress line.
type progressData struct {
	Type    string          `json:"type"`
	AgentID json.RawMessage `json:"agentId"`
	Message *relayedLine    `json:"message"`

	bufs *lineBuffers // see envelope
}

// relayedLine is a line of a subagent's transcript as an agent_progress
// line relays it.
type relayedLine struct {
	Type      string          `json:"type"`
	Timestamp json.RawMessage `json:"timestamp"`
	RequestID json.RawMessage `json:"requestId"`
	Message   *relayedMessage `json:"message"`

	bufs *lineBuffers // see envelope
}

// relayedMessage is what a relayed assistant message holds of a request.
type relayedMessage struct {
	ID    json.RawMessage `json:"id"`
	Model json.RawMessage `json:"model"`
	Usage *usage          `json:"usage"`

	bufs *lineBuffers // see envelope
}

var progressFields = jsonscan.NewFields(
	jsonscan.Field[progressData]{Name: "type", Set: jsonscan.TextOf(words, func(d *progressData) *string { return &d.Type })},
	jsonscan.Field[progressData]{Name: "agentId", Set: jsonscan.Raw(func(d *progressData) *json.RawMessage { return &d.AgentID })},
	jsonscan.PointerIn("message", func(d *progressData) **relayedLine { return &d.Message }, func(d *progressData) *relayedLine {
		if d.bufs == nil {
			return nil
		}
		d.bufs.relayed = relayedLine{bufs: d.bufs}
		return &d.bufs.relayed
	}, relayedLineFields),
)

var relayedLineFields = jsonscan.NewFields(
	jsonscan.Field[relayedLine]{Name: "type", Set: jsonscan.TextOf(words, func(l *relayedLine) *string { return &l.Type })},
	jsonscan.Field[relayedLine]{Name: "timestamp", Set: jsonscan.Raw(func(l *relayedLine) *json.RawMessage { return &l.Timestamp })},
	jsonscan.Field[relayedLine]{Name: "requestId", Set: jsonscan.Raw(func(l *relayedLine) *json.RawMessage { return &l.RequestID })},
	jsonscan.PointerIn("message", func(l *relayedLine) **relayedMessage { return &l.Message }, func(l *relayedLine) *relayedMessage {
		if l.bufs == nil {
			return nil
		}
		l.bufs.relayedMsg = relayedMessage{bufs: l.bufs}
		return &l.bufs.relayedMsg
	}, relayedMessageFields),
)

var relayedMessageFields = jsonscan.NewFields(
	jsonscan.Field[relayedMessage]{Name: "id", Set: jsonscan.Raw(func(m *relayedMessage) *json.RawMessage { return &m.ID })},
	jsonscan.Field[relayedMessage]{Name: "model", Set: jsonscan.Raw(func(m *relayedMessage) *json.RawMessage { return &m.Model })},
	jsonscan.PointerIn("usage", func(m *relayedMessage) **usage { return &m.Usage }, func(m *relayedMessage) *usage {
		if m.bufs == nil {
			return nil
		}
		m.bufs.relayedUsage = usage{split: &m.bufs.relayedSplit}
		return &m.bufs.relayedUsage
	}, usageFields),
)

// relayedCache holds the members of relayed lines that repeat from line to
// line (the agent, its launching call, its model, a response's ids),
// decoded once while they do; apart from the main lines' own, which they
// alternate with.
type relayedCache struct {
	agent, model, msgID, requestID, call lastString
	lane                                 struct{ agent, id string }
	response                             responseKey
}

// relayed turns a subagent's response that an agent_progress line relays
// into a request of the subagent's lane (sa-<agentId>), marked Relayed,
// and names the lane's launching call (the line's parentToolUseID), which
// links the lane to its call when the call's result does not name the
// agent (a refused call, or a session that ended before the subagent
// did). Other progress yields nothing.
func (p *Parser) relayed(env *envelope, out []event.Event) []event.Event {
	d := env.Data
	if d == nil || d.Type != "agent_progress" || d.Message == nil || d.Message.Type != "assistant" {
		return out
	}
	line, msg := d.Message, d.Message.Message
	if msg == nil || msg.Usage == nil {
		return out
	}
	c := &p.relay
	model := c.model.get(msg.Model)
	if model == syntheticModel {
		return out // an API error the subagent's file records; not billed
	}
	lane := c.laneOf(d.AgentID)
	id := c.responseID(msg.ID, line.RequestID)
	if lane == "" || id == "" {
		// Without an agent there is no lane; without a message id the
		// copy could not be told from the lane file's own record.
		return out
	}
	t := millis(line.Timestamp)
	if t <= 0 {
		t = p.st.T
	}
	if call := ident(c.call.get(env.ParentToolUseID)); call != "" {
		out = append(out, event.Event{Kind: event.KindLane, T: t, Agent: lane, Lane: &event.Lane{LaunchCallID: call}})
	}
	// Its latency is unknown (0): the line that started the response is
	// not always relayed, nor the input it answered.
	l := &event.LLM{MsgID: id, Relayed: true}
	msg.Usage.fill(l)
	return append(out, event.Event{Kind: event.KindLLM, T: t, Agent: lane, Model: ident(model), LLM: l})
}

// laneOf is the lane of the agent id raw: sa-<agentId>, as the subagent's
// file and the launching call's result name it; "" for no id, and for a
// compaction's transcript, which is no lane.
func (c *relayedCache) laneOf(raw json.RawMessage) string {
	agent := ident(c.agent.get(raw))
	if agent == "" || strings.HasPrefix(agent, "acompact") {
		return ""
	}
	if c.lane.agent != agent {
		c.lane.agent, c.lane.id = agent, "sa-"+agent
	}
	return c.lane.id
}

// responseID is the response id of a relayed line, built as the
// subagent's file's own lines build it (responseID): the message id, with
// the request id when there is one.
func (c *relayedCache) responseID(msgID, requestID json.RawMessage) string {
	id := ident(c.msgID.get(msgID))
	req := ident(c.requestID.get(requestID))
	if id == "" || req == "" {
		return id
	}
	if c.response.id != id || c.response.req != req {
		c.response = responseKey{id: id, req: req, joined: id + "/" + req}
	}
	return c.response.joined
}
