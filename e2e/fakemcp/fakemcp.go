// Package fakemcp is a minimal MCP server over stdio (JSON-RPC 2.0, one
// message per line) with scripted tools, so that the clients make real
// MCP calls without any network.
package fakemcp

import (
	"bufio"
	"encoding/json"
	"io"
)

// Tool is a scripted tool: every call answers Output, as an error result
// when Fail is set.
type Tool struct {
	Name   string
	Output string
	Fail   bool
}

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   any             `json:"error,omitempty"`
}

// Serve answers requests from r on w until r ends.
func Serve(r io.Reader, w io.Writer, name string, tools []Tool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	enc := json.NewEncoder(w)
	for sc.Scan() {
		var req message
		if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue // notifications need no answer
		}
		resp := message{JSONRPC: "2.0", ID: req.ID}
		switch req.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(req.Params, &p)
			if p.ProtocolVersion == "" {
				p.ProtocolVersion = "2025-06-18"
			}
			resp.Result = map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
				"serverInfo":      map[string]any{"name": name, "version": "1.0.0"},
			}
		case "tools/list":
			var list []any
			for _, t := range tools {
				list = append(list, map[string]any{
					"name": t.Name, "description": "Looks a key up.",
					"inputSchema": map[string]any{"type": "object",
						"properties": map[string]any{"key": map[string]any{"type": "string"}}},
				})
			}
			resp.Result = map[string]any{"tools": list}
		case "tools/call":
			var p struct {
				Name string `json:"name"`
			}
			json.Unmarshal(req.Params, &p)
			resp.Error = map[string]any{"code": -32602, "message": "unknown tool"}
			for _, t := range tools {
				if t.Name == p.Name {
					resp.Error = nil
					resp.Result = map[string]any{"content": []any{map[string]any{"type": "text", "text": t.Output}}, "isError": t.Fail}
				}
			}
		case "ping":
			resp.Result = map[string]any{}
		case "resources/list":
			resp.Result = map[string]any{"resources": []any{}}
		case "prompts/list":
			resp.Result = map[string]any{"prompts": []any{}}
		default:
			resp.Error = map[string]any{"code": -32601, "message": "method not found"}
		}
		if err := enc.Encode(resp); err != nil {
			return err
		}
	}
	return sc.Err()
}
