package fakegemini

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// chunk is one GenerateContentResponse; the last carries the finish
// reason and the usage.
func chunk(model string, parts []map[string]any, u Usage, last bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	resp := map[string]any{"candidates": []any{cand}, "modelVersion": model, "responseId": "fake-" + model}
	if last {
		cand["finishReason"] = "STOP"
		resp["usageMetadata"] = map[string]any{
			"promptTokenCount": u.Input, "cachedContentTokenCount": u.Cached,
			"candidatesTokenCount": u.Output, "thoughtsTokenCount": u.Thoughts,
			"totalTokenCount": u.Total(),
		}
	}
	return resp
}

// writeStream sends a response as streamGenerateContent?alt=sse does: one
// event per part, the usage on the last.
func writeStream(w http.ResponseWriter, model string, parts []map[string]any, u Usage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	for i, p := range parts {
		b, _ := json.Marshal(chunk(model, []map[string]any{p}, u, i == len(parts)-1))
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	}
	if len(parts) == 0 {
		b, _ := json.Marshal(chunk(model, []map[string]any{{"text": ""}}, u, true))
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
