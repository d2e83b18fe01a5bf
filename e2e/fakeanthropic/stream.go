package fakeanthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// writeStream sends a reply as the Messages API's server-sent events, each
// block split into two deltas so that clients really assemble them.
func writeStream(w http.ResponseWriter, id, model string, content []map[string]any, stop string, u Usage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	send := func(typ string, v map[string]any) {
		v["type"] = typ
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	send("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usageJSON(u, 1),
	}})
	send("ping", map[string]any{})
	flush()
	for i, c := range content {
		switch c["type"] {
		case "text":
			text := c["text"].(string)
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, part := range halves(text) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": part}})
			}
		case "thinking":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, part := range halves(c["thinking"].(string)) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": part}})
			}
			send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "signature_delta", "signature": c["signature"]}})
		case "tool_use":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{
				"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(c["input"])
			for _, part := range halves(string(in)) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		send("content_block_stop", map[string]any{"index": i})
		flush()
	}
	send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": usageJSON(u, u.Out),
	})
	send("message_stop", map[string]any{})
	flush()
}

// halves splits s in two at a rune boundary.
func halves(s string) []string {
	r := []rune(s)
	if len(r) < 2 {
		return []string{s}
	}
	return []string{string(r[:len(r)/2]), string(r[len(r)/2:])}
}
