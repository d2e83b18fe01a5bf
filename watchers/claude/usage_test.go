package claude

import (
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// TestSplitResponseUsage checks the records of one response split over
// several lines: they share MsgID, each carries its own usage snapshot
// (never a sum or a delta), and only the first carries the latency.
func TestSplitResponseUsage(t *testing.T) {
	lines := []string{
		`{"type":"user","sessionId":"s","message":{"role":"user","content":"go"},"timestamp":"2026-01-01T00:00:00.000Z"}`,
		`{"type":"assistant","requestId":"req_9","message":{"id":"msg_9","model":"m","content":[{"type":"thinking","thinking":"x"}],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1,"cache_read_input_tokens":100,"cache_creation_input_tokens":10}},"timestamp":"2026-01-01T00:00:02.000Z"}`,
		`{"type":"assistant","requestId":"req_9","message":{"id":"msg_9","model":"m","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":80,"cache_read_input_tokens":100,"cache_creation_input_tokens":10}},"timestamp":"2026-01-01T00:00:03.000Z"}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]},"timestamp":"2026-01-01T00:00:03.100Z"}`,
		`{"type":"assistant","requestId":"req_9","message":{"id":"msg_9","model":"m","content":[{"type":"tool_use","id":"t2","name":"Read","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":80,"cache_read_input_tokens":100,"cache_creation_input_tokens":10}},"timestamp":"2026-01-01T00:00:03.500Z"}`,
		`{"type":"assistant","message":{"id":"msg_10","model":"m","content":[{"type":"cache_creation_split"}],"usage":{"input_tokens":1,"output_tokens":2,"cache_creation":{"ephemeral_5m_input_tokens":30,"ephemeral_1h_input_tokens":12}}},"timestamp":"2026-01-01T00:00:05.000Z"}`,
	}
	out := parseLines(t, lines)
	var llm []*event.LLM
	for _, e := range out {
		if e.Kind == event.KindLLM {
			llm = append(llm, e.LLM)
		}
	}
	if len(llm) != 4 {
		t.Fatalf("%d llm records, want 4", len(llm))
	}
	for i, l := range llm[:3] {
		if l.MsgID != "msg_9/req_9" {
			t.Errorf("record %d: MsgID %q", i, l.MsgID)
		}
	}
	if llm[0].Out != 1 || llm[1].Out != 80 || llm[2].Out != 80 || llm[0].CR != 100 || llm[2].CW != 10 {
		t.Errorf("snapshots not kept per line: %+v %+v %+v", llm[0], llm[1], llm[2])
	}
	if llm[0].LatencyMs != 2000 || llm[1].LatencyMs != 0 || llm[2].LatencyMs != 0 {
		t.Errorf("latency on %d/%d/%d, want on the first line only", llm[0].LatencyMs, llm[1].LatencyMs, llm[2].LatencyMs)
	}
	if !llm[0].Thinking || llm[0].ToolCalls != 0 || llm[1].ToolCalls != 1 || llm[2].ToolCalls != 1 {
		t.Errorf("per-line facets wrong: %+v %+v %+v", llm[0], llm[1], llm[2])
	}
	if llm[3].MsgID != "msg_10" || llm[3].CW != 42 || llm[3].LatencyMs != 1900 {
		t.Errorf("response without request id: %+v", llm[3])
	}
}

// TestCorpusUsageDedup measures over the real logs what de-duplication by
// MsgID saves, and checks the first-line latency rule on every response.
func TestCorpusUsageDedup(t *testing.T) {
	for _, path := range corpusFiles(t) {
		_, events, _ := parseFile(t, path)
		best := map[string]int64{}
		withLatency := map[string]int{}
		var naive int64
		for _, e := range events {
			if e.Kind != event.KindLLM || e.LLM.MsgID == "" {
				continue
			}
			id := e.Agent + "\x00" + e.LLM.MsgID
			u := e.LLM.Usage()
			naive += u
			best[id] = max(best[id], u)
			if e.LLM.LatencyMs != 0 {
				withLatency[id]++
			}
		}
		var dedup int64
		for id, u := range best {
			dedup += u
			if withLatency[id] > 1 {
				t.Errorf("%s: response %q has latency on %d lines", filepath.Base(path), id, withLatency[id])
			}
		}
		if len(best) > 0 {
			t.Logf("%s: %d responses, tokens %d deduplicated vs %d summed per line", filepath.Base(path), len(best), dedup, naive)
		}
	}
}

// TestForkCopiesAreTheParents: a forked session's file begins with a copy
// of its parent's conversation, each copied line marked forkedFrom. The
// copies yield nothing (the parent's map has them: their tokens would be
// billed twice); the fork's own lines count, and its time starts at them.
func TestForkCopiesAreTheParents(t *testing.T) {
	const parent, fork = "0a1b2c3d-0000-4000-8000-000000000001", "0a1b2c3d-0000-4000-8000-000000000002"
	from := `"forkedFrom":{"sessionId":"` + parent + `","messageUuid":"u1"},`
	lines := []string{
		`{"type":"user",` + from + `"sessionId":"` + fork + `","uuid":"c1","message":{"role":"user","content":"go"},"timestamp":"2026-01-01T00:00:00.000Z"}`,
		`{"type":"assistant",` + from + `"sessionId":"` + fork + `","uuid":"c2","requestId":"req_1","message":{"id":"msg_1","model":"m","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/w/a.go"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":80,"cache_read_input_tokens":1000}},"timestamp":"2026-01-01T00:00:02.000Z"}`,
		`{"type":"user",` + from + `"sessionId":"` + fork + `","uuid":"c3","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]},"timestamp":"2026-01-01T00:00:03.000Z"}`,
		`{"type":"user","forkedFrom":null,"sessionId":"` + fork + `","uuid":"n1","message":{"role":"user","content":"and now?"},"timestamp":"2026-01-02T00:00:00.000Z"}`,
		`{"type":"assistant","sessionId":"` + fork + `","uuid":"n2","requestId":"req_2","message":{"id":"msg_2","model":"m","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":7,"output_tokens":3}},"timestamp":"2026-01-02T00:00:04.000Z"}`,
	}
	p := NewParser(sourceFor(fork))
	var out []event.Event
	for i, l := range lines {
		var err error
		if out, err = p.Line([]byte(l), out); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	var llm, calls, users int
	for _, e := range out {
		switch e.Kind {
		case event.KindLLM:
			llm++
			if e.LLM.MsgID != "msg_2/req_2" || e.LLM.In != 7 {
				t.Errorf("request %+v, want only the fork's own msg_2", e.LLM)
			}
		case event.KindCall:
			calls++
		case event.KindUser:
			users++
		}
		if e.T != 0 && e.T < millisOf(t, "2026-01-02T00:00:00.000Z") {
			t.Errorf("a %s record at the parent's time %d", e.Kind, e.T)
		}
	}
	if llm != 1 || calls != 0 || users != 1 {
		t.Errorf("%d requests, %d calls, %d prompts; want the fork's own 1, 0, 1", llm, calls, users)
	}
}

func millisOf(t *testing.T, s string) int64 {
	t.Helper()
	m := millis([]byte(`"` + s + `"`))
	if m <= 0 {
		t.Fatalf("time %s", s)
	}
	return m
}
