package fakeopenai

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// writeStream sends a response as the Responses API's server-sent events.
func writeStream(w http.ResponseWriter, id, model string, items []map[string]any, u Usage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	seq := 0
	send := func(typ string, v map[string]any) {
		v["type"] = typ
		v["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	resp := map[string]any{"id": id, "object": "response", "model": model, "status": "in_progress", "output": []any{}}
	send("response.created", map[string]any{"response": resp})
	send("response.in_progress", map[string]any{"response": resp})
	for i, it := range items {
		send("response.output_item.added", map[string]any{"output_index": i, "item": it})
		if it["type"] == "message" {
			text := it["content"].([]any)[0].(map[string]any)["text"].(string)
			send("response.output_text.delta", map[string]any{"output_index": i, "content_index": 0, "item_id": it["id"], "delta": text})
			send("response.output_text.done", map[string]any{"output_index": i, "content_index": 0, "item_id": it["id"], "text": text})
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	done := map[string]any{"id": id, "object": "response", "model": model, "status": "completed", "output": items,
		"usage": map[string]any{
			"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.Cached},
			"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
			"total_tokens": u.Input + u.Output,
		}}
	send("response.completed", map[string]any{"response": done})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
