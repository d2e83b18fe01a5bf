package codex

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// output pairs a tool output with its open call and emits the result. The
// output text is read only for its header (exit code, wall time, unified
// exec session), its length (n, when the walk measured it), and confirmed
// identifiers; it is never kept.
func (p *Parser) output(id string, raw json.RawMessage, n jsonscan.Len, t int64) {
	p.input(t)
	c := p.st.Calls[id]
	if c == nil {
		return // a duplicate, or a call this rollout never showed
	}
	o := p.readOutput(raw)
	o.rawLen = n
	res := event.Result{CallID: id, ExitCode: o.exit, DurMs: o.durMs, OutBytes: int64(o.bodyLen())}
	if e := c.End; e != nil {
		if res.ExitCode == nil {
			res.ExitCode = e.Exit
		}
		if res.DurMs == 0 {
			res.DurMs = e.Dur
		}
		res.Targets = e.Tg
	}
	failed := o.failed || (c.End != nil && c.End.Err)
	if c.Class == "mcp" && !failed {
		failed = mcpFailed(o.Text())
	}
	if failed {
		res.Err = true
		switch {
		case c.Class == "patch":
			res.ErrClass = "patch_failed"
		case c.End != nil && c.End.Class != "" && c.End.Class != "other":
			res.ErrClass = c.End.Class
		default:
			res.ErrClass = failClass(o.Text(), res.ExitCode)
		}
	}
	switch c.Class {
	case "exec":
		if o.session != "" {
			p.running(o.session, process{Call: id, PR: c.PR, Commit: c.Commit})
		}
		p.confirm(&res, *c, o.Body)
	case "stdin":
		// A long command's output (a PR URL, a commit summary) can come in
		// a later poll of its process.
		p.confirm(&res, *c, o.Body)
		if res.ExitCode != nil && c.Sess != "" {
			delete(p.st.Exec, c.Sess)
		}
	case "spawn":
		lane := c.Lane
		if lane == "" {
			if child := spawnedThread(o.Text()); child != "" {
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
// The body is decoded only for a command whose output can confirm
// something.
func (p *Parser) confirm(res *event.Result, c call, body func() string) {
	if c.PR != "" {
		res.PR = redact.ConfirmPR(body(), c.PR)
	}
	if res.Err {
		return
	}
	if !c.Commit && !c.Head && (c.Class == "exec" || c.Class == "stdin") {
		p.st.QuietCommit = "" // only the very next command can confirm a quiet commit
	}
	if c.Commit {
		res.Commit = redact.ConfirmCommit(body())
		if res.Commit == nil && !c.Head && c.Class == "exec" {
			p.st.QuietCommit = res.CallID // nothing named it yet: a later git log may
		}
	}
	if c.Head && res.Commit == nil && (p.st.QuietCommit != "" || c.Commit) {
		// git log, git rev-parse HEAD or git show after a quiet commit
		// (or in the same command) prints the sha it made.
		if sha := redact.HeadSHA(body()); sha != "" {
			res.Commit = &event.Commit{SHA: sha}
			if !c.Commit {
				res.Commit.Of = p.st.QuietCommit
			}
			p.st.QuietCommit = ""
		}
	}
	if res.Commit != nil {
		if c.Commit {
			p.st.QuietCommit = "" // a confirmed commit ends any earlier wait
		}
		if res.Commit.Repo == "" {
			res.Commit.Repo = p.paths.CWDRepo()
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

// outputHead is how much of an output's text is decoded to read its
// header: the headers Codex writes are a few short lines. An output whose
// header is not read from that much is decoded whole.
const outputHead = 512

// toolOutput is a tool output as its line holds it. When it is a string
// (nearly always) its text is measured where it lies and decoded only as
// far as the header needs, into a buffer the parser reuses; it is decoded
// whole only for what needs it (an error's class, the PR URL or commit a
// command printed, an MCP result's flags, the thread a spawn started).
type toolOutput struct {
	raw  json.RawMessage
	size int // length of the decoded text, -1 until measured
	// rawLen is raw's length when the walk measured it.
	rawLen jsonscan.Len
	// buf holds the whole text decoded when the header needed it.
	buf  []byte
	text *string // the text, once materialised
	outcome
	// header is what the walk of a JSON header fills (see jsonHeader).
	header walkedOutput
}

// outcome is what the header of an output says.
type outcome struct {
	exit    *int
	durMs   int64
	session string // unified exec process still running
	failed  bool
	// The body, the tool's own output after the header, is the text from
	// bodyAt on, or, in the JSON form, the string literal inner (walked) or
	// innerText (decoded by encoding/json). innerLen is inner's length,
	// measured as the walk validated it.
	bodyAt    int
	inner     []byte
	innerLen  jsonscan.Len
	innerText *string
}

// readOutput reads an output's header from as little of its text as
// that takes (see outputHead). The result is valid until the next call.
func (p *Parser) readOutput(raw json.RawMessage) *toolOutput {
	return p.readOutputHead(raw, outputHead)
}

// readOutputHead is readOutput decoding head bytes first.
func (p *Parser) readOutputHead(raw json.RawMessage, head int) *toolOutput {
	o := &p.outp
	*o = toolOutput{raw: raw}
	if len(raw) > 0 && raw[0] == '"' {
		if jsonHeaded(raw) {
			head = -1 // its header is read from the whole text only
		}
		buf, complete := jsonscan.AppendString(p.outBuf[:0], raw, head)
		oc, ok := readOutcome(buf, complete, &o.header)
		if !ok { // the head was not enough (readOutcome of a whole text always is)
			buf, complete = jsonscan.AppendString(buf[:0], raw, -1)
			if complete {
				oc, ok = readOutcome(buf, true, &o.header)
			}
		}
		p.outBuf = buf
		if ok {
			o.outcome, o.size = oc, -1 // measured when asked
			if complete {
				o.buf, o.size = buf, len(buf)
			}
			return o
		}
	}
	text := outputText(raw)
	o.text, o.size = &text, len(text)
	p.outBuf = append(p.outBuf[:0], text...)
	o.buf = p.outBuf
	o.outcome, _ = readOutcome(o.buf, true, &o.header)
	return o
}

// jsonHeaded reports whether the string literal raw starts, unescaped, as
// the text of a JSON header does: then nothing short of the whole text
// reads it, and no head is decoded first. Escapes where the literal's
// start has none are seldom written, and take the usual way.
func jsonHeaded(raw []byte) bool {
	return bytes.HasPrefix(raw, []byte(`"{\"output\":`)) || bytes.HasPrefix(raw, []byte(`"{\"metadata\":`))
}

// Text returns the whole text of the output.
func (o *toolOutput) Text() string {
	if o.text == nil {
		var s string
		if o.buf != nil {
			s = string(o.buf)
		} else {
			s, _ = jsonscan.ValidString(o.raw)
		}
		o.text = &s
	}
	return *o.text
}

// Body returns the tool's own output, after the header.
func (o *toolOutput) Body() string {
	switch {
	case o.innerText != nil:
		return *o.innerText
	case o.inner != nil:
		s, _ := jsonscan.ValidString(o.inner)
		return s
	}
	return o.Text()[o.bodyAt:]
}

func (o *toolOutput) bodyLen() int {
	switch {
	case o.innerText != nil:
		return len(*o.innerText)
	case o.inner != nil:
		n, _ := o.innerLen.Of(o.inner)
		return n
	}
	if o.size < 0 {
		o.size, _ = o.rawLen.Of(o.raw)
	}
	return o.size - o.bodyAt
}

// parseOutput reads the header and body of a whole output text.
func parseOutput(text string) parsedOutput {
	o := toolOutput{text: &text, buf: []byte(text), size: len(text)}
	o.outcome, _ = readOutcome(o.buf, true, &o.header)
	return parsedOutput{outcome: o.outcome, body: o.Body()}
}

type parsedOutput struct {
	outcome
	body string
}

// jsonOutput is the JSON header form, {"output", "metadata":{exit_code,
// duration_seconds}}, as encoding/json decodes it.
type jsonOutput struct {
	Output   *string     `json:"output"`
	Metadata *outputMeta `json:"metadata"`
}

type outputMeta struct {
	ExitCode *int     `json:"exit_code"`
	Duration *float64 `json:"duration_seconds"`
}

// walkedOutput is jsonOutput with the output left where it lies, and
// measured when it is a string. Metadata points to meta when walked.
type walkedOutput struct {
	Output    json.RawMessage
	outputLen jsonscan.Len
	Metadata  *outputMeta
	meta      outputMeta
}

var walkedOutputFields = jsonscan.NewFields(
	jsonscan.Measured("output", func(j *walkedOutput) *json.RawMessage { return &j.Output },
		func(j *walkedOutput) *jsonscan.Len { return &j.outputLen }),
	jsonscan.PointerIn("metadata", func(j *walkedOutput) **outputMeta { return &j.Metadata },
		func(j *walkedOutput) *outputMeta { j.meta = outputMeta{}; return &j.meta }, outputMetaFields),
)

var outputMetaFields = jsonscan.NewFields(
	jsonscan.Field[outputMeta]{Name: "exit_code", Set: integer(func(m *outputMeta) **int { return &m.ExitCode })},
	jsonscan.Field[outputMeta]{Name: "duration_seconds", Set: number(func(m *outputMeta) **float64 { return &m.Duration })},
)

// readOutcome reads the three header forms Codex writes before a tool's
// output: the JSON {"output", "metadata":{exit_code, duration_seconds}} of
// 2025 shell calls; "Exit code: N\nWall time: X seconds\nOutput:\n…" of
// shell_command and apply_patch; and the unified exec "Chunk ID …\nWall
// time …\nProcess exited with code N | Process running with session ID N\n
// Original token count …\nOutput:\n…". Other outputs are failures when they
// start like Codex's own error strings, else of unknown outcome.
//
// head is the start of the text (all of it when complete): ok is false when
// that is not enough to read the header as the whole text would read. w is
// where a JSON header is walked; the outcome may alias it.
func readOutcome(head []byte, complete bool, w *walkedOutput) (o outcome, ok bool) {
	if !complete && len(head) < len(`{"metadata":`) {
		return o, false
	}
	if bytes.HasPrefix(head, []byte(`{"output":`)) || bytes.HasPrefix(head, []byte(`{"metadata":`)) {
		if !complete {
			return o, false
		}
		if jsonHeader(&o, head, w) {
			return o, true
		}
	}
	rest := head
	header := false
	for i := 0; i < 8; i++ {
		if len(rest) == 0 {
			if !complete {
				return o, false
			}
			break
		}
		line, next, found := bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimRight(line, "\r")
		if !found && !complete && len(line) <= longestHeaderPrefix {
			// The line goes on past the head: only a line already too
			// long to be a header is known not to be one.
			return o, false
		}
		switch {
		case string(line) == "Output:":
			o.bodyAt = len(head) - len(next)
			o.failed = o.exit != nil && *o.exit != 0
			return o, true
		case bytes.HasPrefix(line, []byte("Exit code: ")):
			o.exit = atoiPtr(string(line[len("Exit code: "):]))
		case bytes.HasPrefix(line, []byte("Process exited with code ")):
			o.exit = atoiPtr(string(line[len("Process exited with code "):]))
		case bytes.HasPrefix(line, []byte("Process running with session ID ")):
			if id := line[len("Process running with session ID "):]; validInt(id) {
				o.session = string(id)
			}
		case bytes.HasPrefix(line, []byte("Wall time: ")):
			v := bytes.TrimSuffix(bytes.TrimSuffix(line[len("Wall time: "):], []byte(" seconds")), []byte("s"))
			if f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64); err == nil {
				o.durMs = secondsMs(f)
			}
		case bytes.HasPrefix(line, []byte("Chunk ID: ")), bytes.HasPrefix(line, []byte("Original token count: ")),
			bytes.HasPrefix(line, []byte("Total output lines: ")):
		default:
			i = 8 // not a header line
			continue
		}
		if !found && !complete {
			return o, false // a header line whose value goes on past the head
		}
		header = true
		rest = next
	}
	if header {
		o.bodyAt = len(head) - len(rest)
		o.failed = o.exit != nil && *o.exit != 0
		return o, true
	}
	o = outcome{}
	start := bytes.TrimLeft(head, " \n")
	if !complete && len(start) < longestFailurePrefix {
		return o, false
	}
	o.failed = hasPrefixAny(string(start[:min(len(start), longestFailurePrefix)]), failurePrefixes...)
	return o, true
}

// jsonHeader reads the JSON header form of a whole text: walked into w,
// the output string left in place, or where the walk does not mirror
// encoding/json exactly, decoded by it.
func jsonHeader(o *outcome, text []byte, w *walkedOutput) bool {
	var meta *outputMeta
	*w = walkedOutput{}
	if walkedOutputFields.Fill(w, text) && walkedString(w.Output) {
		if len(w.Output) == 0 || w.Output[0] == 'n' {
			return false // no output, as encoding/json leaves a null one
		}
		o.inner, o.innerLen, meta = w.Output, w.outputLen, w.Metadata
	} else {
		var j jsonOutput
		if json.Unmarshal(text, &j) != nil || j.Output == nil {
			return false
		}
		o.innerText, meta = j.Output, j.Metadata
	}
	if meta != nil {
		o.exit = meta.ExitCode
		if meta.Duration != nil {
			o.durMs = secondsMs(*meta.Duration)
		}
	}
	o.failed = o.exit != nil && *o.exit != 0
	return true
}

// walkedString reports whether a walked output is what jsonOutput's
// *string takes without a type error: a string, null, or nothing.
func walkedString(v []byte) bool {
	return len(v) == 0 || v[0] == '"' || v[0] == 'n'
}

// longestHeaderPrefix is the length of the longest header line prefix.
const longestHeaderPrefix = len("Process running with session ID ")

// validInt reports whether s is an int64 as strconv.ParseInt reads it.
func validInt(s []byte) bool {
	_, err := strconv.ParseInt(string(s), 10, 64)
	return err == nil
}

// longestFailurePrefix is the length of the longest of failurePrefixes.
var longestFailurePrefix = func() int {
	n := 0
	for _, p := range failurePrefixes {
		n = max(n, len(p))
	}
	return n
}()

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
