// Package fakechat is a scripted stand-in for the OpenAI Chat Completions
// API (streaming or not), the wire API that OpenCode's OpenAI-compatible
// providers and Copilot CLI's BYOK providers speak, enough for either to
// run a session against 127.0.0.1.
//
// As in fakeopenai, a request finds its script by a marker in a user
// message ("[[script:NAME]]") and its step by the tool_call_id of the last
// tool message it carries, which encodes script and step. The server keeps
// no conversation state.
package fakechat

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentmap/agentmap/e2e/scripted"
)

// Item is one part of a scripted answer: text, or a function call.
type Item struct {
	Text     string
	Function string
	Args     map[string]any
}

// Usage is what the server reports for an answer. Prompt includes the
// cached tokens, as the API counts them.
type Usage struct {
	Prompt, Cached, Completion int64
}

// Total is every token counted once.
func (u Usage) Total() int64 { return u.Prompt + u.Completion }

// Reply is one scripted answer.
type Reply struct {
	Items []Item
	Usage Usage
	// FailFirst, when non-zero, answers the first attempt at this step with
	// that HTTP status; the client's retry gets the reply.
	FailFirst int
}

// Served records one answered request of a script.
type Served = scripted.Served[Usage]

// Server answers /chat/completions from Scripts.
type Server struct {
	Scripts map[string][]Reply
	// SideReply answers unscripted requests (titles, summaries).
	SideReply string

	scripted.Ledger[Usage]
}

// New returns a server for the scripts.
func New(scripts map[string][]Reply) *Server {
	return &Server{Scripts: scripts}
}

// CallID is the id of call n of a script's step.
func CallID(script string, step, n int) string { return scripted.ID("call_", script, step, n) }

type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
}

type request struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []message `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// text returns the text of a message's content (a string or parts).
func (m message) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// route finds the script and step of a request: the last message that is a
// tool result of a scripted call, or a user message with a marker.
func (s *Server) route(req *request) (string, int, bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		switch m.Role {
		case "tool":
			if name, step, ok := scripted.ParseID(m.ToolCallID, "call_", s.Scripts); ok {
				return name, step + 1, true
			}
		case "user":
			if name, ok := scripted.ScriptIn(m.text()); ok {
				return name, 0, true
			}
		}
	}
	return "", 0, false
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[]}`)
		return
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
	default:
		http.NotFound(w, r)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	// A request without tools is the client's own side work (a title,
	// a summary), even when it quotes the scripted prompt.
	name, step, ok := s.route(&req)
	ok = ok && len(req.Tools) > 0
	var reply Reply
	var n int
	if ok && step < len(s.Scripts[name]) {
		reply = s.Scripts[name][step]
		if reply.FailFirst != 0 && s.FailFirst(name, step) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(reply.FailFirst)
			io.WriteString(w, `{"error":{"message":"server error","type":"server_error"}}`)
			return
		}
		var tools []string
		for _, it := range reply.Items {
			if it.Function != "" {
				tools = append(tools, it.Function)
			}
		}
		var offered []string
		for _, t := range req.Tools {
			offered = append(offered, t.Function.Name)
		}
		n = s.Answer(Served{Script: name, Step: step, Model: req.Model, Usage: reply.Usage, Tools: tools}, offered)
	} else {
		reply = Reply{Items: []Item{{Text: cmp.Or(s.SideReply, "Done.")}}, Usage: Usage{Prompt: 10, Completion: 2}}
		n = s.Side()
	}
	id := fmt.Sprintf("chatcmpl-fake%06d", n)

	var text strings.Builder
	var calls []map[string]any
	for _, it := range reply.Items {
		if it.Function == "" {
			text.WriteString(it.Text)
			continue
		}
		args, _ := json.Marshal(it.Args)
		calls = append(calls, map[string]any{"index": len(calls), "id": CallID(name, step, len(calls)), "type": "function",
			"function": map[string]any{"name": it.Function, "arguments": string(args)}})
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": reply.Usage.Prompt, "completion_tokens": reply.Usage.Completion,
		"total_tokens":          reply.Usage.Prompt + reply.Usage.Completion,
		"prompt_tokens_details": map[string]any{"cached_tokens": reply.Usage.Cached}}
	created := time.Now().Unix()
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": text.String()}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	send := func(choices []any, extra map[string]any) {
		v := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model, "choices": choices}
		for k, x := range extra {
			v[k] = x
		}
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}
	}
	send(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	if text.Len() > 0 {
		send(delta(map[string]any{"content": text.String()}, nil), nil)
	}
	for _, c := range calls {
		send(delta(map[string]any{"tool_calls": []any{c}}, nil), nil)
	}
	send(delta(map[string]any{}, finish), nil)
	send([]any{}, map[string]any{"usage": usage})
	io.WriteString(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
