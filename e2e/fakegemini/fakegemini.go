// Package fakegemini is a scripted stand-in for the Gemini API
// (models/<model>:streamGenerateContent with server-sent events, and the
// plain generateContent and countTokens), enough for the Gemini CLI to run
// a session against 127.0.0.1.
//
// As in fakeanthropic and fakeopenai, a request finds its script by a
// marker in the last user text ("[[script:NAME]]") and its step by the ids
// of the function responses it carries, which encode script and step
// (the client prefixes the tool name: "run_shell_command__call_x_0_0").
// The server keeps no conversation state.
package fakegemini

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agentmap/agentmap/e2e/scripted"
)

// Part is one part of a scripted response.
type Part struct {
	Text    string
	Thought string
	// Function and Args make a functionCall.
	Function string
	Args     map[string]any
}

// Usage is what the server reports for a response (usageMetadata). Input
// includes the cached tokens, as the API counts them.
type Usage struct {
	Input, Cached, Output, Thoughts int64
}

// Total is every token counted once, as totalTokenCount.
func (u Usage) Total() int64 { return u.Input + u.Output + u.Thoughts }

// Reply is one scripted response.
type Reply struct {
	Parts []Part
	Usage Usage
	// FailFirst, when non-zero, answers the first attempt at this step with
	// that HTTP status (500, 429…); the client's retry gets the reply.
	FailFirst int
}

// Served records one answered request of a script.
type Served = scripted.Served[Usage]

// Server answers the Gemini API from Scripts.
type Server struct {
	Scripts map[string][]Reply
	// SideReply is the text of the answer to unscripted requests (the
	// client's own side questions); "Done." when empty.
	SideReply string

	scripted.Ledger[Usage]
}

// New returns a server for the scripts.
func New(scripts map[string][]Reply) *Server {
	return &Server{Scripts: scripts}
}

// CallID is the id of function call n of a script's step.
func CallID(script string, step, n int) string { return scripted.ID("call_", script, step, n) }

type request struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string `json:"text"`
			FunctionResponse *struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

func (s *Server) route(req *request) (string, int, bool) {
	for i := len(req.Contents) - 1; i >= 0; i-- {
		c := req.Contents[i]
		if c.Role != "user" && c.Role != "" {
			continue
		}
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				if name, step, ok := s.parseID(p.FunctionResponse.ID); ok {
					return name, step + 1, true
				}
			}
		}
		for j := len(c.Parts) - 1; j >= 0; j-- {
			if name, ok := scripted.ScriptIn(c.Parts[j].Text); ok {
				return name, 0, true
			}
		}
	}
	return "", 0, false
}

// parseID finds script and step in the id of a function response, which
// the client prefixes with the tool's name ("run_shell_command__call_x_0_0").
func (s *Server) parseID(id string) (string, int, bool) {
	if i := strings.LastIndex(id, "__"); i >= 0 {
		id = id[i+2:]
	}
	return scripted.ParseID(id, "call_", s.Scripts)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	model, method, _ := strings.Cut(path[strings.LastIndex(path, "/")+1:], ":")
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"models":[]}`)
		return
	case r.Method != http.MethodPost || !strings.Contains(path, "/models/"):
		http.NotFound(w, r)
		return
	case method == "countTokens":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"totalTokens":100}`)
		return
	case method != "streamGenerateContent" && method != "generateContent":
		http.NotFound(w, r)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"code":400,"message":"bad json","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	name, step, ok := s.route(&req)
	if ok && len(req.Tools) == 0 {
		ok = false // a side question about the conversation (no tools offered)
	}
	var reply Reply
	if ok && step < len(s.Scripts[name]) {
		reply = s.Scripts[name][step]
		if reply.FailFirst != 0 && s.FailFirst(name, step) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(reply.FailFirst)
			fmt.Fprintf(w, `{"error":{"code":%d,"message":"server error","status":"INTERNAL"}}`, reply.FailFirst)
			return
		}
		var tools []string
		for _, p := range reply.Parts {
			if p.Function != "" {
				tools = append(tools, p.Function)
			}
		}
		var offered []string
		for _, t := range req.Tools {
			for _, f := range t.FunctionDeclarations {
				offered = append(offered, f.Name)
			}
		}
		s.Answer(Served{Script: name, Step: step, Model: model, Usage: reply.Usage, Tools: tools}, offered)
	} else {
		reply = Reply{Parts: []Part{{Text: cmp.Or(s.SideReply, "Done.")}}, Usage: Usage{Input: 10, Output: 2}}
		s.Side()
	}

	var parts []map[string]any
	calls := 0
	for _, p := range reply.Parts {
		switch {
		case p.Function != "":
			args := p.Args
			if args == nil {
				args = map[string]any{}
			}
			parts = append(parts, map[string]any{"functionCall": map[string]any{
				"id": CallID(name, step, calls), "name": p.Function, "args": args}})
			calls++
		case p.Thought != "":
			parts = append(parts, map[string]any{"text": p.Thought, "thought": true})
		default:
			parts = append(parts, map[string]any{"text": p.Text})
		}
	}
	if method == "generateContent" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(chunk(model, parts, reply.Usage, true))
		return
	}
	writeStream(w, model, parts, reply.Usage)
}
