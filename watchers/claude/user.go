package claude

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// toolUseResult is the structured result Claude Code stores beside a tool
// result. Only metadata keys are declared.
type toolUseResult struct {
	AgentID             json.RawMessage `json:"agentId"`
	DurationMs          json.RawMessage `json:"durationMs"`
	TotalDurationMs     json.RawMessage `json:"totalDurationMs"`
	DurationSeconds     json.RawMessage `json:"durationSeconds"`
	Interrupted         json.RawMessage `json:"interrupted"`
	BackgroundTaskID    json.RawMessage `json:"backgroundTaskId"`
	PersistedOutputSize json.RawMessage `json:"persistedOutputSize"`
	Code                json.RawMessage `json:"code"` // a web fetch's HTTP status
	// ReturnCode is Claude Code's reading of a non-zero exit it does not
	// count as a failure ("No matches found" for grep).
	ReturnCode   json.RawMessage `json:"returnCodeInterpretation"`
	GitOperation *struct {
		Commit *struct {
			SHA json.RawMessage `json:"sha"`
		} `json:"commit"`
		PR *struct {
			URL    json.RawMessage `json:"url"`
			Action json.RawMessage `json:"action"`
		} `json:"pr"`
	} `json:"gitOperation"`
}

// structured holds a line's toolUseResult: decoded when it is an object
// that may hold a key the parser reads, kept raw when it is a string (the
// text of a failure).
type structured struct {
	obj  *toolUseResult
	text json.RawMessage
}

func (s *structured) UnmarshalJSON(b []byte) error {
	switch {
	case isObject(b):
		s.obj = &toolUseResult{}
		// Most large results (file reads and edits with their contents)
		// hold no key the parser reads and are not decoded again.
		if mayHoldMetadata(b) {
			return decode(b, s.obj)
		}
	case isString(b):
		s.text = bytes.Clone(b)
	}
	return nil
}

func (p *Parser) user(env *envelope, out []event.Event) []event.Event {
	var msg message
	if env.Message != nil {
		msg = *env.Message
	}
	p.st.InputT = p.st.T
	notPrompt := boolean(env.IsMeta) || boolean(env.IsCompactSummary) || boolean(env.TranscriptOnly) ||
		!humanOrigin(env) || p.src.Lane != "" // a subagent's prompts come from its parent

	if msg.Text != nil {
		return p.promptText(msg.Text, notPrompt, out)
	}
	blocks := msg.Blocks
	results := 0
	for i := range blocks {
		if blocks[i].Type == "tool_result" {
			results++
		}
	}
	var u event.User
	interrupted := false
	for i := range blocks {
		b := &blocks[i]
		switch b.Type {
		case "tool_result":
			var tur structured
			if results == 1 { // the structured result belongs to the line's only result
				tur = env.ToolUseResult
			}
			out = append(out, p.result(b, tur))
		case "text":
			switch classifyText(b.Text) {
			case textInterrupt:
				interrupted = true
			case textPrompt:
				_, n := b.textLen.Of(b.Text)
				u.Chars += n
				if !notPrompt && results == 0 {
					u.URLs += redact.CountURLs(str(b.Text))
				}
			}
		case "image":
			u.Images++
		}
	}
	if interrupted {
		out = append(out, p.interrupt())
	}
	if !notPrompt && results == 0 && (u.Chars > 0 || u.Images > 0) {
		e := p.ev(event.KindUser)
		e.User = &u
		out = append(out, e)
	}
	return out
}

// origin is the origin of a user line.
type origin struct {
	Kind string `json:"kind"`
}

// humanOrigin tells typed prompts from lines the harness writes as user
// lines (task notifications, system-sourced prompts).
func humanOrigin(env *envelope) bool {
	if isObject(env.Origin) {
		var o origin
		if read(originFields, env.Origin, &o) == nil && o.Kind != "" && o.Kind != "human" {
			return false
		}
	}
	return str(env.PromptSource) != "system"
}

// promptText handles a user line whose content is one string.
func (p *Parser) promptText(raw json.RawMessage, notPrompt bool, out []event.Event) []event.Event {
	switch classifyText(raw) {
	case textInterrupt:
		return append(out, p.interrupt())
	case textPrompt:
		if notPrompt {
			return out
		}
		_, n, _ := jsonscan.StringLen(raw)
		e := p.ev(event.KindUser)
		e.User = &event.User{Chars: n, URLs: redact.CountURLs(str(raw))}
		return append(out, e)
	case textCommand:
		if notPrompt {
			return out
		}
		if u := slashCommand(str(raw)); u != nil {
			e := p.ev(event.KindUser)
			e.User = u
			return append(out, e)
		}
	}
	return out
}

func (p *Parser) interrupt() event.Event {
	e := p.ev(event.KindError)
	e.Error = &event.Error{Source: "orchestration", Class: "interrupted"}
	return e
}

type textKind int

const (
	textPrompt    textKind = iota
	textInterrupt          // "[Request interrupted by user]" and kin
	textCommand            // a slash command the user typed
	textInjected           // command output, notifications, IDE context
)

// interruptPrefixes are the markers Claude Code writes when a turn or tool
// call is cut short.
var interruptPrefixes = []string{
	"[Request interrupted",
	"[Tool call did not complete",
	"[Tool call interrupted",
	"[Agent call interrupted",
	"[This turn ended before it finished",
}

// injectedTags open user-line texts that the harness writes: local command
// output, bash-mode input and output, task and teammate notifications, IDE
// context. None of them is a prompt. Bash-mode commands (<bash-input>) are
// the user's own shell, not a call of the agent, and are not recorded.
var injectedTags = []string{
	"<local-command-", "<bash-", "<task-notification", "<teammate-message",
	"<ide_", "<system-reminder", "<user-memory-input", "<persisted-output",
}

// classifyText reads the start of a raw JSON string to tell what kind of
// user text it is. At most a short prefix is decoded.
func classifyText(raw json.RawMessage) textKind {
	head := textHead(raw, 64)
	head = strings.TrimLeft(head, " \t\r\n")
	for _, pfx := range interruptPrefixes {
		if strings.HasPrefix(head, pfx) {
			return textInterrupt
		}
	}
	if strings.HasPrefix(head, "<command-name>") || strings.HasPrefix(head, "<command-message>") {
		return textCommand
	}
	for _, tag := range injectedTags {
		if strings.HasPrefix(head, tag) {
			return textInjected
		}
	}
	return textPrompt
}

// textHead decodes at most n bytes of the start of a raw JSON string.
func textHead(raw json.RawMessage, n int) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if len(raw) <= n+2 {
		return str(raw)
	}
	// A cut inside an escape sequence does not decode: shorten until it
	// does (an escape is at most 6 bytes).
	buf := make([]byte, 0, n+2)
	for k := 0; k < 8; k++ {
		buf = append(append(buf[:0], raw[:n+1-k]...), '"')
		if s, ok := jsonscan.String(buf); ok {
			return s
		}
	}
	return ""
}

// localCommands are built-in slash commands that run in the CLI and send
// nothing to the model; other slash commands (custom commands, skills,
// /compact, /init, /review) start a model turn and count as prompts.
var localCommands = map[string]bool{
	"clear": true, "mcp": true, "model": true, "config": true, "cost": true, "status": true,
	"help": true, "login": true, "logout": true, "resume": true, "context": true, "usage": true,
	"permissions": true, "hooks": true, "agents": true, "exit": true, "quit": true, "ide": true,
	"doctor": true, "theme": true, "vim": true, "terminal-setup": true, "statusline": true,
	"output-style": true, "add-dir": true, "plugin": true, "plugins": true, "export": true,
	"rewind": true, "fast": true, "effort": true, "tasks": true, "todos": true, "bashes": true,
	"memory": true, "privacy-settings": true, "release-notes": true, "upgrade": true,
	"feedback": true, "bug": true, "stats": true, "keybindings": true, "sandbox": true,
	"rename": true, "copy": true, "install-github-app": true, "migrate-installer": true,
}

// slashCommand measures a typed slash command: the command and its
// arguments as the user typed them. Local commands are not prompts.
func slashCommand(s string) *event.User {
	name := between(s, "<command-name>", "</command-name>")
	name = strings.TrimPrefix(strings.TrimSpace(name), "/")
	if name == "" || localCommands[name] {
		return nil
	}
	args := strings.TrimSpace(between(s, "<command-args>", "</command-args>"))
	chars := 1 + len([]rune(name))
	if args != "" {
		chars += 1 + len([]rune(args))
	}
	return &event.User{Chars: chars, URLs: redact.CountURLs(args)}
}

func between(s, open, close string) string {
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	s = s[i+len(open):]
	if j := strings.Index(s, close); j >= 0 {
		return s[:j]
	}
	return ""
}

// result turns a tool_result block into a result record.
func (p *Parser) result(b *block, st structured) event.Event {
	pc, _ := p.st.takeCall(b.ToolUseID)
	r := &event.Result{CallID: ident(b.ToolUseID), Err: boolean(b.IsError)}
	r.OutBytes = contentBytes(b.Content, b.contentLen)

	var tur toolUseResult
	if st.obj != nil {
		tur = *st.obj
	}
	if n := integer(tur.PersistedOutputSize); n > 0 {
		// The content holds a preview; the full output went to
		// tool-results/<id>.txt, whose size is recorded here.
		r.OutBytes = n
	}
	switch {
	case integer(tur.DurationMs) > 0:
		r.DurMs = integer(tur.DurationMs)
	case integer(tur.TotalDurationMs) > 0:
		r.DurMs = integer(tur.TotalDurationMs)
	case num(tur.DurationSeconds) > 0:
		r.DurMs = int64(num(tur.DurationSeconds) * 1000)
	}
	if id := ident(str(tur.AgentID)); id != "" {
		r.Child = "sa-" + id
	}

	// The output text is decoded only when something must be found in it,
	// and dropped right after.
	needText := r.Err || (pc.Shell && (pc.PR != "" || pc.Commit || pc.Head))
	var text string
	if needText {
		text = contentText(b.Content)
		if text == "" {
			text = str(st.text)
		}
	}
	if r.Err {
		r.ErrClass = errorClass(text)
		if pc.Subagent && r.ErrClass == "other" {
			r.ErrClass = "subagent_failed"
		}
	}
	if pc.Fetch && !r.Err {
		// Claude Code hands an HTTP error page back as a successful
		// result; the status says the fetch failed.
		if code := integer(tur.Code); code >= 400 && code <= 599 {
			r.Err, r.ErrClass = true, httpClass(code)
		}
	}
	if pc.Shell {
		r.ExitCode = exitCode(r.Err, text, st.obj)
		if r.Err && r.ExitCode == nil {
			r.ErrClass = unranClass(r.ErrClass, text)
		}
		if !r.Err {
			p.confirm(r, pc, text, &tur)
		}
	}
	e := p.ev(event.KindResult)
	e.Result = r
	return e
}

// turKeys are the keys of toolUseResult that the parser reads.
var turKeys = [][]byte{
	[]byte(`"agentId"`), []byte(`"durationMs"`), []byte(`"totalDurationMs"`), []byte(`"durationSeconds"`),
	[]byte(`"interrupted"`), []byte(`"backgroundTaskId"`), []byte(`"persistedOutputSize"`), []byte(`"gitOperation"`),
	[]byte(`"code"`), []byte(`"returnCodeInterpretation"`),
}

// mayHoldMetadata tells whether a structured result can hold a key the
// parser reads. Most large ones (file reads and edits with their contents)
// hold none, and are then not decoded a second time; a key that only
// appears inside a text value costs a decode and nothing else.
func mayHoldMetadata(raw []byte) bool {
	for _, k := range turKeys {
		if bytes.Contains(raw, k) {
			return true
		}
	}
	return false
}

// errorClass classifies a failed result. A user's refusal of a tool call is
// a denied permission; the rest is redact's table.
func errorClass(text string) string {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "The user doesn't want to") || strings.HasPrefix(t, "User rejected") {
		return "permission_denied"
	}
	return redact.ErrorClass(t)
}

// httpClass is the tool errClass of a failed fetch's HTTP status.
func httpClass(code int64) string {
	switch code {
	case 404, 410:
		return "not_found"
	case 429:
		return "rate_limit"
	case 401, 403, 407:
		return "permission_denied"
	case 408, 504:
		return "timeout"
	}
	return "other"
}

// unranClass classes a failed shell result without an exit status: the
// command never ran. Claude Code reports every command failure as "Exit
// code N" and wraps its own refusals in <tool_use_error>; its permission
// and interrupt messages have their own classes. What is left is the
// message of a PreToolUse hook that blocked the call, whose free text (a
// linter's report, say) must not pass for a missing file or an exit.
func unranClass(class, text string) string {
	switch class {
	case "not_found", "exit_code", "other":
		if !strings.HasPrefix(strings.TrimSpace(text), "<tool_use_error>") {
			return "blocked"
		}
	}
	return class
}

// exitCode reads "Exit code N" from a failed shell result (no numeric field
// exists); a completed, successful foreground command exited 0.
func exitCode(failed bool, text string, tur *toolUseResult) *int {
	if failed {
		for line := range strings.Lines(text) {
			line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "Error:"))
			if rest, ok := strings.CutPrefix(line, "Exit code "); ok {
				if n, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil {
					return &n
				}
			}
		}
		return nil
	}
	if tur == nil || boolean(tur.Interrupted) || len(bytes.TrimSpace(tur.BackgroundTaskID)) > 0 {
		return nil
	}
	if interp := str(tur.ReturnCode); interp != "" {
		// Claude Code let a non-zero exit pass and said why: the status
		// is the one its interpretation stands for, the call no failure.
		if n, ok := interpretedExit[interp]; ok {
			return &n
		}
		return nil // a reading we do not know: the status is not 0
	}
	zero := 0
	return &zero
}

// interpretedExit maps Claude Code's returnCodeInterpretation messages (its
// command semantics for grep/rg, find, diff and test) to the exit status
// they describe.
var interpretedExit = map[string]int{
	"No matches found":                   1, // grep, rg
	"Some directories were inaccessible": 1, // find
	"Files differ":                       1, // diff
	"Condition is false":                 1, // test, [
}

// confirm looks for a PR or commit that a successful shell command reports.
func (p *Parser) confirm(r *event.Result, pc pending, text string, tur *toolUseResult) {
	if pc.PR != "" {
		r.PR = redact.ConfirmPR(text, pc.PR)
	}
	if r.PR == nil && tur.GitOperation != nil && tur.GitOperation.PR != nil {
		r.PR = redact.ConfirmPR(str(tur.GitOperation.PR.URL), gitPRAction(str(tur.GitOperation.PR.Action)))
	}
	if pc.Commit {
		r.Commit = redact.ConfirmCommit(text)
	}
	if r.Commit == nil && tur.GitOperation != nil && tur.GitOperation.Commit != nil {
		if sha := str(tur.GitOperation.Commit.SHA); isHex(sha) {
			r.Commit = &event.Commit{SHA: sha}
		}
	}
	if !pc.GitCommit && !pc.Head {
		p.st.QuietCommit = "" // only the very next command can confirm a quiet commit
	}
	if pc.GitCommit && r.Commit == nil && !pc.Head {
		p.st.QuietCommit = pc.ID // nothing named it yet: a later git log may
	}
	if pc.Head && r.Commit == nil && (p.st.QuietCommit != "" || pc.GitCommit) {
		// git log, git rev-parse HEAD or git show after a quiet commit
		// (or in the same line) prints the sha it made.
		if sha := redact.HeadSHA(text); sha != "" {
			r.Commit = &event.Commit{SHA: sha}
			if !pc.GitCommit {
				r.Commit.Of = p.st.QuietCommit
			}
			p.st.QuietCommit = ""
		}
	}
	if r.Commit != nil {
		if pc.GitCommit {
			p.st.QuietCommit = "" // a confirmed commit ends any earlier wait
		}
		if r.Commit.Repo == "" {
			r.Commit.Repo = p.paths.CWDRepo()
		}
	}
}

// gitPRAction maps the CLI's own record of a PR operation to a PR action.
func gitPRAction(a string) string {
	switch a {
	case "merge", "merged":
		return "merge"
	case "close", "closed":
		return "close"
	case "comment", "commented":
		return "comment"
	}
	return "create"
}

func isHex(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// contentBytes is the byte length of a tool result's content: a string
// (of length n when measured), or the text of its text blocks plus the
// base64 length of its images.
func contentBytes(raw json.RawMessage, n jsonscan.Len) int64 {
	if isString(raw) {
		nbytes, _ := n.Of(raw)
		return int64(nbytes)
	}
	if !isArray(raw) {
		return 0
	}
	blocks, ok := scanBlocks(raw)
	if !ok {
		blocks = nil
		if decode(raw, &blocks) != nil {
			return 0
		}
	}
	var total int64
	for i := range blocks {
		b := &blocks[i]
		switch {
		case b.Type == "text":
			n, _ := b.textLen.Of(b.Text)
			total += int64(n)
		case b.Source != nil:
			n, _ := b.Source.dataLen.Of(b.Source.Data)
			total += int64(n)
		}
	}
	return total
}

// contentText decodes the text of a tool result, for classification and
// confirmation only.
func contentText(raw json.RawMessage) string {
	if isString(raw) {
		return str(raw)
	}
	if !isArray(raw) {
		return ""
	}
	blocks, ok := scanBlocks(raw)
	if !ok {
		blocks = nil
		if decode(raw, &blocks) != nil {
			return ""
		}
	}
	var sb strings.Builder
	for i := range blocks {
		if blocks[i].Type == "text" {
			sb.WriteString(str(blocks[i].Text))
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}
