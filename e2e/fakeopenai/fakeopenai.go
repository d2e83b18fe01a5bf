// Package fakeopenai is a scripted stand-in for the OpenAI Responses API
// (streaming), enough for the Codex CLI to run a session against
// 127.0.0.1.
//
// As in fakeanthropic, a request finds its script by a marker in the last
// user message ("[[script:NAME]]") and its step by the call ids of the
// tool outputs it carries, which encode script and step. The server keeps
// no conversation state, so resumed threads find their place.
package fakeopenai

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agentmap/agentmap/e2e/scripted"
)

// Item is one output item of a scripted response.
type Item struct {
	Reasoning string
	Text      string
	// Function and Args make a function_call (Args is marshalled to the
	// JSON string the API sends).
	Function string
	Args     map[string]any
	// Namespace is the tool namespace of a function (multi_agent_v1).
	Namespace string
	// ArgsFrom, when set, computes Args from the outputs of earlier calls
	// that the request carries (call id -> output text): a call that names
	// what an earlier one returned, such as the agent id to wait for.
	ArgsFrom func(outputs map[string]string) map[string]any
	// Custom and Input make a custom_tool_call (freeform input, such as
	// apply_patch's patch).
	Custom string
	Input  string
}

// Usage is what the server reports for a response. Input includes the
// cached tokens and Output the reasoning tokens, as the API counts them.
type Usage struct {
	Input, Cached, Output, Reasoning int64
}

// Total is every token counted once.
func (u Usage) Total() int64 { return u.Input + u.Output }

// Reply is one scripted response.
type Reply struct {
	Items []Item
	Usage Usage
	// FailFirst, when non-zero, answers the first attempt at this step with
	// that HTTP status (500, 429…); the client's retry gets the reply.
	FailFirst int
}

// Served records one answered request of a script.
type Served = scripted.Served[Usage]

// Server answers /v1/responses from Scripts.
type Server struct {
	Scripts map[string][]Reply
	// SideReply is the text of the answer to unscripted requests
	// (compaction summaries, titles); "Done." when empty.
	SideReply string

	scripted.Ledger[Usage]
}

// New returns a server for the scripts.
func New(scripts map[string][]Reply) *Server {
	return &Server{Scripts: scripts}
}

// CallID is the call id of call n of a script's step.
func CallID(script string, step, n int) string { return scripted.ID("call_", script, step, n) }

type request struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  []json.RawMessage `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

type inputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	CallID  string          `json:"call_id"`
	Output  json.RawMessage `json:"output"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func (s *Server) route(req *request) (string, int, bool) {
	for i := len(req.Input) - 1; i >= 0; i-- {
		var it inputItem
		if json.Unmarshal(req.Input[i], &it) != nil {
			continue
		}
		switch it.Type {
		case "function_call_output", "custom_tool_call_output":
			if name, step, ok := scripted.ParseID(it.CallID, "call_", s.Scripts); ok {
				return name, step + 1, true
			}
		case "message", "":
			if it.Role != "user" {
				continue
			}
			for _, c := range it.Content {
				if name, ok := scripted.ScriptIn(c.Text); ok {
					return name, 0, true
				}
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
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
		return
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
	default:
		http.NotFound(w, r)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	name, step, ok := s.route(&req)
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
			} else if it.Custom != "" {
				tools = append(tools, it.Custom)
			}
		}
		var offered []string
		for _, t := range req.Tools {
			offered = append(offered, cmp.Or(t.Name, t.Type))
		}
		n = s.Answer(Served{Script: name, Step: step, Model: req.Model, Usage: reply.Usage, Tools: tools}, offered)
	} else {
		reply = Reply{Items: []Item{{Text: cmp.Or(s.SideReply, "Done.")}}, Usage: Usage{Input: 10, Output: 2}}
		n = s.Side()
	}
	respID := fmt.Sprintf("resp_fake%06d", n)

	items := make([]map[string]any, 0, len(reply.Items))
	calls := 0
	for i, it := range reply.Items {
		id := fmt.Sprintf("%s_%d", respID, i)
		switch {
		case it.Function != "":
			a := it.Args
			if it.ArgsFrom != nil {
				a = it.ArgsFrom(outputs(&req))
			}
			args, _ := json.Marshal(a)
			fc := map[string]any{"type": "function_call", "id": "fc_" + id, "status": "completed",
				"name": it.Function, "arguments": string(args), "call_id": CallID(name, step, calls)}
			if it.Namespace != "" {
				fc["namespace"] = it.Namespace
			}
			items = append(items, fc)
			calls++
		case it.Custom != "":
			items = append(items, map[string]any{"type": "custom_tool_call", "id": "ctc_" + id, "status": "completed",
				"name": it.Custom, "input": it.Input, "call_id": CallID(name, step, calls)})
			calls++
		case it.Reasoning != "":
			items = append(items, map[string]any{"type": "reasoning", "id": "rs_" + id,
				"summary": []any{map[string]any{"type": "summary_text", "text": it.Reasoning}}})
		default:
			items = append(items, map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": it.Text, "annotations": []any{}}}})
		}
	}
	writeStream(w, respID, req.Model, items, reply.Usage)
}

// outputs maps the call ids of the tool outputs in a request to their text.
func outputs(req *request) map[string]string {
	out := map[string]string{}
	for _, raw := range req.Input {
		var it inputItem
		if json.Unmarshal(raw, &it) != nil || it.CallID == "" || len(it.Output) == 0 {
			continue
		}
		var text string
		if json.Unmarshal(it.Output, &text) != nil {
			text = string(it.Output)
		}
		out[it.CallID] = text
	}
	return out
}
