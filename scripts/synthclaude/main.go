// Command synthclaude writes a synthetic Claude Code transcript of a given
// size, for memory and throughput benchmarks of agentmap on logs far larger
// than any fixture. Its lines have the shapes of real transcripts (prompts,
// assistant responses split over several lines sharing a message id, tool
// calls and results with large outputs), and deterministic content.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	size := flag.Int64("mb", 500, "size of the transcript in MB")
	out := flag.String("o", "synthetic.jsonl", "output file")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const session = "5e55a0f1-0000-4000-8000-00000000beef"
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var written int64
	filler := strings.Repeat("synthetic output line with some words in it\n", 400) // ~18 KB
	emit := func(v map[string]any) {
		b, _ := json.Marshal(v)
		b = append(b, '\n')
		n, _ := w.Write(b)
		written += int64(n)
	}
	envelope := func(i int, typ string) map[string]any {
		return map[string]any{
			"type": typ, "sessionId": session, "cwd": "/home/dev/projects/api", "version": "2.1.170",
			"uuid": fmt.Sprintf("u-%08d", i), "isSidechain": false,
			"timestamp": base.Add(time.Duration(i) * 700 * time.Millisecond).Format(time.RFC3339Nano),
		}
	}
	limit := *size << 20
	for i := 0; written < limit; i++ {
		if i%200 == 0 {
			u := envelope(i, "user")
			u["message"] = map[string]any{"role": "user", "content": "please look at the request pipeline and fix the retry bug"}
			emit(u)
			continue
		}
		msg := fmt.Sprintf("msg_%08d", i)
		tool := fmt.Sprintf("toolu_%08d", i)
		usage := map[string]any{"input_tokens": 3, "cache_creation_input_tokens": 1200, "cache_read_input_tokens": 40000 + i, "output_tokens": 180}
		a := envelope(i, "assistant")
		a["requestId"] = "req_" + msg
		a["message"] = map[string]any{"id": msg, "model": "claude-sonnet-4-5", "role": "assistant", "usage": usage,
			"content": []any{map[string]any{"type": "text", "text": "Let me check the file."}}}
		emit(a)
		a = envelope(i, "assistant")
		a["requestId"] = "req_" + msg
		var input map[string]any
		name := "Bash"
		switch i % 3 {
		case 0:
			input = map[string]any{"command": "go test ./internal/... -run TestRetry"}
		case 1:
			name, input = "Read", map[string]any{"file_path": fmt.Sprintf("/home/dev/projects/api/internal/p%d/file.go", i%50)}
		default:
			name, input = "Edit", map[string]any{"file_path": fmt.Sprintf("/home/dev/projects/api/internal/p%d/file.go", i%50), "old_string": "a", "new_string": "b"}
		}
		a["message"] = map[string]any{"id": msg, "model": "claude-sonnet-4-5", "role": "assistant", "usage": usage, "stop_reason": "tool_use",
			"content": []any{map[string]any{"type": "tool_use", "id": tool, "name": name, "input": input}}}
		emit(a)
		r := envelope(i, "user")
		r["message"] = map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": tool, "content": filler}}}
		emit(r)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f.Close()
	fmt.Printf("%s: %d MB\n", *out, written>>20)
}
