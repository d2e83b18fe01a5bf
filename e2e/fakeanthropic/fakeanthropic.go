// Package fakeanthropic is a scripted stand-in for the Anthropic Messages
// API, enough for Claude Code to run a session against 127.0.0.1.
//
// A request is routed to a script by a marker in its last prompt
// ("[[script:NAME]]"), and to a step of that script by the ids of the tool
// results it carries: every tool_use id the server hands out encodes its
// script and step. The server is thus stateless about conversations, so
// parallel subagents, resumed sessions and client retries all find their
// place. Requests without a marker (titles, summaries) get a short text.
package fakeanthropic

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/agentmap/agentmap/e2e/scripted"
)

// Block is one content block of a scripted reply.
type Block struct {
	Thinking string
	Text     string
	// Tool and Input make a tool_use block.
	Tool  string
	Input map[string]any
}

// SideUsage is what the server reports for every unscripted (side) request.
var SideUsage = Usage{In: 10, Out: 2}

// Usage is what the server reports for a reply.
type Usage struct {
	In, CacheWrite, CacheRead, Out int64
}

// Total is the sum of every token count.
func (u Usage) Total() int64 { return u.In + u.CacheWrite + u.CacheRead + u.Out }

// Reply is one scripted model response.
type Reply struct {
	Blocks []Block
	Usage  Usage
	// FailFirst, when non-zero, answers the first attempt at this step with
	// that HTTP status (529 overloaded, 500…); the client's retry succeeds.
	FailFirst int
}

// Served records one answered request of a script.
type Served = scripted.Served[Usage]

// Server answers /v1/messages from Scripts.
type Server struct {
	Scripts map[string][]Reply
	// SideReply is the text of the answer to unscripted requests
	// (compaction summaries, titles); "Done." when empty.
	SideReply string

	scripted.Ledger[Usage]

	mu sync.Mutex
	// asked holds, per answered step, the last message of its request: a
	// client's retry repeats it, while a compaction request reuses the
	// conversation with an instruction added and belongs to no step.
	asked map[string]string
}

// New returns a server for the scripts.
func New(scripts map[string][]Reply) *Server {
	return &Server{Scripts: scripts, asked: map[string]string{}}
}

// ToolID is the tool_use id of call n of a script's step.
func ToolID(script string, step, n int) string { return scripted.ID("toolu_", script, step, n) }

type request struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []message `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

func (m message) blocks() []block {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

// route finds the script and step of a request from its last user
// message: the step after the one whose tool results it carries, or step 0
// of the script its prompt names. Anything else (a compaction or title
// prompt) belongs to no script.
func (s *Server) route(req *request) (string, int, bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		for _, b := range m.blocks() {
			if b.Type == "tool_result" {
				if name, step, ok := scripted.ParseID(b.ToolUseID, "toolu_", s.Scripts); ok {
					return name, step + 1, true
				}
			}
		}
		for _, b := range m.blocks() {
			if b.Type == "text" {
				if name, ok := scripted.ScriptIn(b.Text); ok {
					return name, 0, true
				}
			}
		}
		return "", 0, false
	}
	return "", 0, false
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages/count_tokens"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":1000}`)
		return
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages"):
	default:
		http.NotFound(w, r)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	name, step, ok := s.route(&req)
	key := fmt.Sprintf("%s/%d", name, step)
	last := ""
	if n := len(req.Messages); n > 0 {
		last = string(req.Messages[n-1].Content)
	}
	s.mu.Lock()
	if prev, seen := s.asked[key]; ok && seen && prev != last {
		ok = false
	}
	ok = ok && len(req.Tools) > 0 && step < len(s.Scripts[name])
	if ok {
		s.asked[key] = last
	}
	s.mu.Unlock()
	var reply Reply
	var answer int
	if ok {
		reply = s.Scripts[name][step]
		if reply.FailFirst != 0 && s.FailFirst(name, step) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(reply.FailFirst)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		var tools []string
		for _, b := range reply.Blocks {
			if b.Tool != "" {
				tools = append(tools, b.Tool)
			}
		}
		var offered []string
		for _, t := range req.Tools {
			offered = append(offered, t.Name)
		}
		answer = s.Answer(Served{Script: name, Step: step, Model: req.Model, Usage: reply.Usage, Tools: tools}, offered)
	} else {
		// Side requests (titles, topic checks) and steps past a script's
		// end get a short text; they are not part of any transcript.
		reply = Reply{Blocks: []Block{{Text: cmp.Or(s.SideReply, "Done.")}}, Usage: SideUsage}
		answer = s.Side()
	}
	msgID := fmt.Sprintf("msg_fake%06d", answer)

	content := make([]map[string]any, 0, len(reply.Blocks))
	n := 0
	for _, b := range reply.Blocks {
		switch {
		case b.Tool != "":
			in := b.Input
			if in == nil {
				in = map[string]any{}
			}
			content = append(content, map[string]any{"type": "tool_use", "id": ToolID(name, step, n), "name": b.Tool, "input": in})
			n++
		case b.Thinking != "":
			content = append(content, map[string]any{"type": "thinking", "thinking": b.Thinking, "signature": "c2lnbmF0dXJl"})
		default:
			content = append(content, map[string]any{"type": "text", "text": b.Text})
		}
	}
	stop := "end_turn"
	if n > 0 {
		stop = "tool_use"
	}
	if req.Stream {
		writeStream(w, msgID, req.Model, content, stop, reply.Usage)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": usageJSON(reply.Usage, reply.Usage.Out),
	})
}

func usageJSON(u Usage, out int64) map[string]any {
	return map[string]any{
		"input_tokens": u.In, "cache_creation_input_tokens": u.CacheWrite,
		"cache_read_input_tokens": u.CacheRead, "output_tokens": out,
	}
}
