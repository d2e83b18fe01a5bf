package codex

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
)

// output pairs a tool output with its open call and emits the result. The
// output text is read only for its header (exit code, wall time, unified
// exec session), its length, and confirmed identifiers; it is never kept.
func (p *Parser) output(id string, raw json.RawMessage, t int64) {
	p.input(t)
	c := p.st.Calls[id]
	if c == nil {
		return // a duplicate, or a call this rollout never showed
	}
	text := outputText(raw)
	h := parseOutput(text)
	res := event.Result{CallID: id, ExitCode: h.exit, DurMs: h.durMs, OutBytes: int64(len(h.body))}
	if e := c.End; e != nil {
		if res.ExitCode == nil {
			res.ExitCode = e.Exit
		}
		if res.DurMs == 0 {
			res.DurMs = e.Dur
		}
		res.Targets = e.Tg
	}
	failed := h.failed || (c.End != nil && c.End.Err)
	if c.Class == "mcp" && !failed {
		failed = mcpFailed(text)
	}
	if failed {
		res.Err = true
		switch {
		case c.Class == "patch":
			res.ErrClass = "patch_failed"
		case c.End != nil && c.End.Class != "" && c.End.Class != "other":
			res.ErrClass = c.End.Class
		default:
			res.ErrClass = failClass(text, res.ExitCode)
		}
	}
	switch c.Class {
	case "exec":
		if h.session != "" {
			p.running(h.session, process{Call: id, PR: c.PR, Commit: c.Commit})
		}
		p.confirm(&res, *c, h.body)
	case "stdin":
		// A long command's output (a PR URL, a commit summary) can come in
		// a later poll of its process.
		p.confirm(&res, *c, h.body)
		if res.ExitCode != nil && c.Sess != "" {
			delete(p.st.Exec, c.Sess)
		}
	case "spawn":
		lane := c.Lane
		if lane == "" {
			if child := spawnedThread(text); child != "" {
				lane = LaneID(child)
				p.declareLane(t, lane, id, c.SAType, "")
			}
		}
		res.Child = lane
	}
	p.finish(id, t, res)
}

// running remembers a unified-exec process that write_stdin calls may poll.
func (p *Parser) running(sess string, proc process) {
	if p.st.Exec == nil {
		p.st.Exec = map[string]process{}
	}
	if _, known := p.st.Exec[sess]; !known && len(p.st.Exec) >= maxProcs {
		for _, k := range sortedKeys(p.st.Exec)[:len(p.st.Exec)-maxProcs+1] {
			delete(p.st.Exec, k)
		}
	}
	p.st.Exec[sess] = proc
}

// confirm attaches what a shell output confirms: a PR URL printed by gh or
// glab, or git commit's summary lines.
func (p *Parser) confirm(res *event.Result, c call, body string) {
	if c.PR != "" {
		res.PR = redact.ConfirmPR(body, c.PR)
	}
	if c.Commit && !res.Err {
		if cm := redact.ConfirmCommit(body); cm != nil {
			if cm.Repo == "" {
				cm.Repo = p.paths.CWDRepo()
			}
			res.Commit = cm
		}
	}
}

// outputText returns the text of an output: a string, an array of content
// items (texts joined, images skipped), or one content item.
func outputText(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] != '"' && raw[0] != '[' && raw[0] != '{' {
		return ""
	}
	if len(raw) > 0 && raw[0] == '{' {
		var one contentPart
		if json.Unmarshal(raw, &one) == nil && one.Type != "" {
			text, _ := contentText(raw)
			return text
		}
		return string(raw) // structured output (tool_search tools, …): measured only
	}
	text, _ := contentText(raw)
	return text
}

// outcome is what the header of an output says.
type outcome struct {
	exit    *int
	durMs   int64
	session string // unified exec process still running
	body    string // the tool's own output after the header
	failed  bool
}

// parseOutput reads the three header forms Codex writes before a tool's
// output: the JSON {"output", "metadata":{exit_code, duration_seconds}} of
// 2025 shell calls; "Exit code: N\nWall time: X seconds\nOutput:\n…" of
// shell_command and apply_patch; and the unified exec "Chunk ID …\nWall
// time …\nProcess exited with code N | Process running with session ID N\n
// Original token count …\nOutput:\n…". Other outputs are failures when they
// start like Codex's own error strings, else of unknown outcome.
func parseOutput(text string) outcome {
	o := outcome{body: text}
	if strings.HasPrefix(text, `{"output":`) || strings.HasPrefix(text, `{"metadata":`) {
		var j struct {
			Output   *string `json:"output"`
			Metadata *struct {
				ExitCode *int     `json:"exit_code"`
				Duration *float64 `json:"duration_seconds"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(text), &j) == nil && j.Output != nil {
			o.body = *j.Output
			if m := j.Metadata; m != nil {
				o.exit = m.ExitCode
				if m.Duration != nil {
					o.durMs = secondsMs(*m.Duration)
				}
			}
			o.failed = o.exit != nil && *o.exit != 0
			return o
		}
	}
	rest := text
	header := false
	for i := 0; i < 8 && rest != ""; i++ {
		line, next, _ := strings.Cut(rest, "\n")
		line = strings.TrimRight(line, "\r")
		switch {
		case line == "Output:":
			o.body = next
			o.failed = o.exit != nil && *o.exit != 0
			return o
		case strings.HasPrefix(line, "Exit code: "):
			o.exit = atoiPtr(line[len("Exit code: "):])
		case strings.HasPrefix(line, "Process exited with code "):
			o.exit = atoiPtr(line[len("Process exited with code "):])
		case strings.HasPrefix(line, "Process running with session ID "):
			if _, err := strconv.ParseInt(line[len("Process running with session ID "):], 10, 64); err == nil {
				o.session = line[len("Process running with session ID "):]
			}
		case strings.HasPrefix(line, "Wall time: "):
			v := strings.TrimSuffix(strings.TrimSuffix(line[len("Wall time: "):], " seconds"), "s")
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				o.durMs = secondsMs(f)
			}
		case strings.HasPrefix(line, "Chunk ID: "), strings.HasPrefix(line, "Original token count: "),
			strings.HasPrefix(line, "Total output lines: "):
		default:
			i = 8 // not a header line
			continue
		}
		header = true
		rest = next
	}
	if header {
		o.body = rest
		o.failed = o.exit != nil && *o.exit != 0
		return o
	}
	o.exit, o.durMs, o.session = nil, 0, ""
	o.failed = hasPrefixAny(strings.TrimLeft(text, " \n"), failurePrefixes...)
	return o
}

// failurePrefixes start the error strings Codex returns instead of running
// a tool (sandbox denials, spawn errors, rejected patches, bad arguments).
var failurePrefixes = []string{
	"failed in sandbox", "execution error", "error:", "Error:", "ERROR:",
	"apply_patch verification failed", "aborted", "failed to parse function arguments",
	"err:", "unsupported call", "unknown tool", "Failed to", "failed to",
	"exec command rejected", "patch rejected", "command rejected",
}

// failClass classifies a failed output; a non-zero exit that redact does not
// know better is exit_code.
func failClass(text string, exit *int) string {
	c := redact.ErrorClass(text)
	if exit != nil && *exit != 0 && (c == "" || c == "other") {
		return "exit_code"
	}
	if c == "" {
		return "other"
	}
	return c
}

// mcpFailed reads the failure flags of a serialized MCP CallToolResult.
func mcpFailed(text string) bool {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "err:") || strings.HasPrefix(s, "Err:") {
		return true
	}
	if !strings.HasPrefix(s, "{") {
		return false
	}
	var r struct {
		IsError *bool `json:"isError"`
		Success *bool `json:"success"`
	}
	if json.Unmarshal([]byte(s), &r) != nil {
		return false
	}
	return (r.IsError != nil && *r.IsError) || (r.Success != nil && !*r.Success)
}

var uuidAny = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// spawnedThread reads the thread id a spawn_agent output names: a JSON
// object with agent_id / thread_id / new_thread_id / id, or a bare id.
func spawnedThread(text string) string {
	s := strings.TrimSpace(text)
	if uuidAny.MatchString(s) {
		return s
	}
	if !strings.HasPrefix(s, "{") {
		return ""
	}
	var j map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &j) != nil {
		return ""
	}
	for _, k := range []string{"agent_id", "thread_id", "new_thread_id", "id"} {
		var v string
		if json.Unmarshal(j[k], &v) == nil && uuidAny.MatchString(v) {
			return v
		}
	}
	return ""
}

func atoiPtr(s string) *int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return nil
	}
	return &n
}

func secondsMs(f float64) int64 {
	if f < 0 || math.IsNaN(f) || f > 1e9 {
		return 0
	}
	return int64(math.Round(f * 1000))
}
