package codex

import (
	"bytes"
	"encoding/json"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// args holds the whitelisted keys of a tool call's arguments. Everything
// else in the arguments (script bodies, stdin chars, plan text, prompts) is
// never decoded.
type args struct {
	Command   json.RawMessage `json:"command"` // argv ([]string) or a shell string
	Cmd       string          `json:"cmd"`
	Workdir   string          `json:"workdir"`
	SessionID json.RawMessage `json:"session_id"`
	Path      string          `json:"path"`
	FilePath  string          `json:"file_path"`
	DirPath   string          `json:"dir_path"`
	Input     string          `json:"input"`
	Patch     string          `json:"patch"`
	AgentType string          `json:"agent_type"`
	AgentRole string          `json:"agent_role"`
	Model     string          `json:"model"`
	Server    string          `json:"server"`
	URL       string          `json:"url"`
}

// decodeArgs reads function_call.arguments: a JSON string holding JSON (the
// usual form), or an object. The string is decoded into a buffer the parser
// reuses, and the keys into the parser's own args (a walk's target escapes
// to the heap: one per call otherwise): both hold until the next call.
func (p *Parser) decodeArgs(raw json.RawMessage) *args {
	a := &p.args
	*a = args{}
	if len(raw) == 0 {
		return a
	}
	if raw[0] == '"' {
		var ok bool
		if p.argBuf, ok = jsonscan.AppendString(p.argBuf[:0], raw, -1); !ok {
			return a
		}
		raw = p.argBuf
	}
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || b[0] != '{' {
		return a
	}
	if !argFields.Fill(a, b) {
		*a = args{}
		_ = json.Unmarshal(b, a)
	}
	return a
}

// commandOf reads a shell call's command (valid JSON) as encoding/json
// decodes it into an argv, or, when that fails or gives no argv, into a
// string: an array of strings (null elements are empty), else a string.
func commandOf(raw json.RawMessage) (argv []string, cmd string) {
	if raw = bytes.TrimLeft(raw, " \t\r\n"); len(raw) == 0 {
		return nil, ""
	}
	switch raw[0] {
	case '"':
		cmd, _ = jsonscan.ValidString(raw)
		return nil, cmd
	case '[':
		ok := jsonscan.ArrayValid(raw, func(elem []byte) bool {
			s := ""
			switch elem[0] {
			case '"':
				s, _ = jsonscan.ValidString(elem)
			case 'n':
			default:
				return false // a type error: the argv fails, and so does the string
			}
			argv = append(argv, s)
			return true
		})
		if ok {
			return argv, ""
		}
	}
	return nil, ""
}

// functionCall classifies a function_call by its tool name.
func (p *Parser) functionCall(name, ns string, rawArgs json.RawMessage, id string, t int64) {
	a := p.decodeArgs(rawArgs)
	// Names are kept in the map: anything that is not an identifier is
	// not a tool name and is not kept.
	if name = identifier(name); name == "" {
		name = "unknown"
	}
	ns = identifier(ns)
	if srv, tool, ok := mcpName(name, ns); ok {
		// Codex's own qualified name. A namespace that is a prefix of the
		// tool's name (mcp__server__ with the tool, mcp__apps__github with
		// "_fetch_pr") joins as it is; 0.17x's mcp__server takes "__".
		full := name
		switch {
		case ns == "":
		case strings.HasSuffix(ns, "__") || strings.HasPrefix(name, "_"):
			full = ns + name
		default:
			full = ns + "__" + name
		}
		p.emitCall(t, id, event.Call{Tool: full, Kind: "mcp", Cat: "mcp", Server: srv, MCPTool: tool}, call{Tool: full, Class: "mcp"})
		return
	}
	if ns != "" && !collabNamespace(ns) {
		name = ns + "." + name
	}
	switch name {
	case "shell", "container.exec", "shell_command":
		// shell takes an argv and shell_command a string; accept either.
		var ev event.Call
		var c call
		if argv, cmd := commandOf(a.Command); len(argv) > 0 {
			ev, c = p.shellArgv(name, argv, a.Workdir)
		} else {
			ev, c = p.shellString(name, cmd, a.Workdir)
		}
		p.emitCall(t, id, ev, c)
	case "exec_command":
		ev, c := p.shellString(name, a.Cmd, a.Workdir)
		p.emitCall(t, id, ev, c)
	case "write_stdin":
		sess := sessionKey(a.SessionID)
		proc := p.st.Exec[sess]
		ev := event.Call{Tool: name, Kind: "exec", Cat: "shell", Continues: proc.Call}
		p.emitCall(t, id, ev, call{Tool: name, Class: "stdin", Sess: sess, PR: proc.PR, Commit: proc.Commit})
	case "apply_patch":
		text := a.Input
		if text == "" {
			text = a.Patch
		}
		ev, c := p.patchCall(text, a.Workdir)
		p.emitCall(t, id, ev, c)
	case "view_image":
		ev := event.Call{Tool: name, Kind: "read", Cat: "file"}
		if a.Path != "" {
			ev.Targets = []event.Target{p.target(a.Path, a.Workdir, "read", "")}
		}
		p.emitCall(t, id, ev, call{Tool: name})
	case "read_file", "list_dir", "grep_files":
		kind, touch, target := "search", "hit", firstOf(a.Path, a.DirPath)
		if name == "read_file" {
			kind, touch, target = "read", "read", firstOf(a.FilePath, a.Path)
		}
		ev := event.Call{Tool: name, Kind: kind, Cat: "file"}
		if target != "" {
			ev.Targets = []event.Target{p.target(target, a.Workdir, touch, "")}
		}
		p.emitCall(t, id, ev, call{Tool: name})
	case "web_search", "web.run", "web_fetch":
		host := "search"
		if h := redact.Host(a.URL); h != "" {
			host = h
		}
		p.emitCall(t, id, event.Call{Tool: name, Kind: "web", Cat: "web", Host: host}, call{Tool: name})
	case "spawn_agent":
		ev := event.Call{Tool: name, Kind: "subagent", Cat: "subagent", SubagentType: identifier(firstOf(a.AgentType, a.AgentRole))}
		p.emitCall(t, id, ev, call{Tool: name, Class: "spawn", SAType: ev.SubagentType})
	case "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource":
		ev := event.Call{Tool: name, Kind: "mcp", Cat: "mcp", Server: identifier(a.Server), MCPTool: name}
		p.emitCall(t, id, ev, call{Tool: name, Class: "mcp"})
	case "update_plan", "request_user_input", "send_input", "wait", "wait_agent", "close_agent",
		"resume_agent", "list_agents", "tool_search":
		p.emitCall(t, id, event.Call{Tool: name, Kind: "tool", Cat: "tool"}, call{Tool: name})
	default:
		tc := redact.ClassifyTool(name)
		ev := event.Call{Tool: name, Kind: tc.Kind, Cat: tc.Cat, Server: tc.Server, MCPTool: tc.MCPTool}
		if ev.Kind == "" {
			ev.Kind, ev.Cat = "tool", "tool"
		}
		if target := firstOf(a.FilePath, a.Path, a.DirPath); target != "" {
			switch ev.Kind {
			case "read":
				ev.Targets = []event.Target{p.target(target, a.Workdir, "read", "")}
			case "search":
				ev.Targets = []event.Target{p.target(target, a.Workdir, "hit", "")}
			case "edit":
				ev.Targets = []event.Target{p.target(target, a.Workdir, "edit", "modify")}
			}
		}
		c := call{Tool: name}
		if ev.Kind == "mcp" {
			c.Class = "mcp"
		}
		p.emitCall(t, id, ev, c)
	}
}

// customCall handles a freeform tool call: apply_patch carries the patch as
// raw input; other freeform tools carry their JSON arguments as input.
func (p *Parser) customCall(it *item, t int64) {
	if it.Name == "apply_patch" || it.Name == "applypatch" {
		ev, c := p.patchCall(it.Input, "")
		p.emitCall(t, it.CallID, ev, c)
		return
	}
	raw, _ := json.Marshal(it.Input)
	p.functionCall(it.Name, it.Namespace, raw, it.CallID, t)
}

// localShell handles a local_shell_call item (action.command argv).
func (p *Parser) localShell(it *item, t int64) {
	var action struct {
		Command []string `json:"command"`
		Workdir string   `json:"working_directory"`
	}
	_ = json.Unmarshal(it.Action, &action)
	id := it.CallID
	if id == "" {
		id = safeID(it.ID)
	}
	ev, c := p.shellArgv("local_shell", action.Command, action.Workdir)
	p.emitCall(t, id, ev, c)
}

// webSearch handles a web_search_call item: a search, or a page the model
// opened (its host only).
func (p *Parser) webSearch(it *item, t int64) {
	var action struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	}
	_ = json.Unmarshal(it.Action, &action)
	host := "search"
	if action.Type != "search" && action.URL != "" {
		if h := redact.Host(action.URL); h != "" {
			host = h
		}
	}
	p.emitCall(t, "", event.Call{Tool: "web_search", Kind: "web", Cat: "web", Host: host}, call{})
}

// shellArgv classifies an argv command. An apply_patch invocation (argv or a
// `bash -lc "apply_patch <<EOF …"` script) is an edit.
func (p *Parser) shellArgv(tool string, argv []string, workdir string) (event.Call, call) {
	if len(argv) >= 2 && isPatchProgram(argv[0]) {
		return p.patchCall(argv[1], workdir)
	}
	if script, ok := shellScript(argv); ok {
		if patch, ok := patchInScript(script); ok {
			return p.patchCall(patch, workdir)
		}
	}
	return shellEvent(tool, redact.ParseArgv(argv))
}

// shellString classifies a shell command string.
func (p *Parser) shellString(tool, cmd, workdir string) (event.Call, call) {
	if patch, ok := patchInScript(cmd); ok {
		return p.patchCall(patch, workdir)
	}
	return shellEvent(tool, redact.ParseShell(cmd))
}

func shellEvent(tool string, sh redact.Shell) (event.Call, call) {
	ev := event.Call{Tool: tool, Kind: sh.Kind(), Cat: sh.Cat, Verb: sh.Verb, VCS: sh.VCS}
	if ev.Cat == "" {
		ev.Cat = "shell"
	}
	c := call{Tool: tool, Class: "exec"}
	if v := sh.VCS; v != nil {
		c.PR = prAction(v)
	}
	c.Commit, c.Head = sh.Commits, sh.ShowsHead
	return ev, c
}

// prAction is the ConfirmPR action of a gh/glab operation, or "".
func prAction(v *event.VCS) string {
	if v.Provider != "github" && v.Provider != "gitlab" && v.Provider != "bitbucket" {
		return ""
	}
	noun, verb, ok := strings.Cut(v.Action, "_")
	if !ok || (noun != "pr" && noun != "mr") {
		return ""
	}
	switch verb {
	case "create", "merge", "close", "comment":
		return verb
	}
	return ""
}

var shells = map[string]bool{"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "pwsh": true, "powershell": true, "powershell.exe": true, "cmd.exe": true}

// shellScript returns the script of `<shell> -c|-lc|-Command script`.
func shellScript(argv []string) (string, bool) {
	if len(argv) < 3 || !shells[strings.ToLower(path.Base(strings.ReplaceAll(argv[0], `\`, "/")))] {
		return "", false
	}
	switch argv[1] {
	case "-c", "-lc", "-ic", "-lic", "-cl", "-Command", "-command", "/c", "/C":
		return argv[2], true
	}
	return "", false
}

func isPatchProgram(s string) bool {
	b := path.Base(strings.ReplaceAll(s, `\`, "/"))
	return b == "apply_patch" || b == "applypatch"
}

// patchInScript finds a patch fed to apply_patch in a shell script (Codex
// runs `apply_patch <<'EOF' … EOF` itself instead of the shell).
func patchInScript(script string) (string, bool) {
	i := strings.Index(script, "*** Begin Patch")
	if i < 0 {
		return "", false
	}
	head := script[:i]
	for _, f := range strings.FieldsFunc(head, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ';' || r == '&' || r == '|' || r == '(' || r == '<'
	}) {
		if isPatchProgram(f) {
			return script[i:], true
		}
	}
	return "", false
}

// patchCall turns apply_patch input into an edit with one target per file
// header. Nothing but the header paths is read from the patch.
func (p *Parser) patchCall(patch, workdir string) (event.Call, call) {
	ev := event.Call{Tool: "apply_patch", Kind: "edit", Cat: "file"}
	var paths []string
	for _, h := range patchHeaders(patch) {
		ev.Targets = append(ev.Targets, p.target(h.path, workdir, "edit", h.op))
		paths = append(paths, joinPath(workdir, h.path))
	}
	ev.SkillWrite = skillOf(paths)
	return ev, call{Tool: "apply_patch", Class: "patch"}
}

type patchHeader struct{ path, op string }

// patchHeaders reads the file headers of a Codex patch: Add File (create),
// Update File (modify, or rename-from when a Move to follows), Delete File
// (delete), Move to (rename-to).
func patchHeaders(patch string) []patchHeader {
	var hs []patchHeader
	for len(patch) > 0 {
		line := patch
		if i := strings.IndexByte(patch, '\n'); i >= 0 {
			line, patch = patch[:i], patch[i+1:]
		} else {
			patch = ""
		}
		line = strings.TrimRight(line, "\r")
		if !strings.HasPrefix(line, "*** ") {
			continue
		}
		for _, m := range []struct{ prefix, op string }{
			{"*** Add File: ", "create"}, {"*** Update File: ", "modify"},
			{"*** Delete File: ", "delete"}, {"*** Move to: ", "rename-to"},
		} {
			if !strings.HasPrefix(line, m.prefix) {
				continue
			}
			p := strings.TrimSpace(line[len(m.prefix):])
			if p == "" {
				break
			}
			if m.op == "rename-to" && len(hs) > 0 && hs[len(hs)-1].op == "modify" {
				hs[len(hs)-1].op = "rename-from"
			}
			hs = append(hs, patchHeader{path: p, op: m.op})
			break
		}
	}
	return hs
}

// target resolves a path named by a call; a relative path is relative to
// the call's workdir when it has one, else to the session's cwd.
func (p *Parser) target(pth, workdir, touch, op string) event.Target {
	return p.paths.Target(joinPath(workdir, pth), touch, op)
}

func joinPath(dir, p string) string {
	if dir == "" || p == "" || isAbs(p) {
		return p
	}
	if strings.HasSuffix(dir, "/") || strings.HasSuffix(dir, `\`) {
		return dir + p
	}
	return dir + "/" + p
}

func isAbs(p string) bool {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || strings.HasPrefix(p, "~") {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z'))
}

func skillOf(paths []string) string {
	for _, p := range paths {
		if s := redact.SkillWrite(p); s != "" {
			return s
		}
	}
	return ""
}

// collabNamespace reports whether a namespace holds Codex's own agent tools
// (multi_agent_v1: spawn_agent, wait_agent, send_input, close_agent,
// resume_agent): their calls are named by the bare tool name, like the
// un-namespaced tools of older builds, and are not MCP calls.
func collabNamespace(ns string) bool {
	return strings.HasPrefix(ns, "multi_agent") || ns == "collaboration"
}

// mcpName splits an MCP tool name: mcp__server__tool, the 2025
// server__tool, or a namespace "mcp__server[__prefix]" with the tool name.
func mcpName(name, ns string) (server, tool string, ok bool) {
	if ns != "" {
		rest, isMCP := strings.CutPrefix(ns, "mcp__")
		if !isMCP {
			return "", "", false
		}
		srv, sub, _ := strings.Cut(rest, "__")
		return identifier(srv), identifier(sub + name), srv != ""
	}
	if rest, isMCP := strings.CutPrefix(name, "mcp__"); isMCP {
		srv, tool, _ := strings.Cut(rest, "__")
		return identifier(srv), identifier(tool), srv != ""
	}
	if i := strings.Index(name, "__"); i > 0 && i+2 < len(name) {
		return identifier(name[:i]), identifier(name[i+2:]), true
	}
	return "", "", false
}

// sessionKey normalises a unified-exec session id (number or string).
func sessionKey(raw json.RawMessage) string {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		return ""
	}
	return s
}

// emitCall emits a call (after any repo its targets declared) and opens it
// for its output.
func (p *Parser) emitCall(t int64, id string, ev event.Call, c call) {
	p.flushRepos(t)
	ev.ID = id
	c.T = t
	if id != "" {
		if p.st.Calls == nil {
			p.st.Calls = map[string]*call{}
		}
		p.st.Calls[id] = &c
		p.pruneCalls()
	}
	p.emit(event.Event{Kind: event.KindCall, T: t, Call: &ev})
}

// maxOpen bounds the open calls kept: calls whose output never comes
// (interrupted turns) must not grow the carry-state without end.
const maxOpen = 256

// pruneCalls forgets the oldest open calls beyond maxOpen.
func (p *Parser) pruneCalls() {
	at := func(c *call) int64 {
		if c == nil {
			return 0
		}
		return c.T
	}
	for len(p.st.Calls) > maxOpen {
		oldest, first := "", true
		for id, c := range p.st.Calls {
			if o := p.st.Calls[oldest]; first || at(c) < at(o) || (at(c) == at(o) && id < oldest) {
				oldest, first = id, false
			}
		}
		delete(p.st.Calls, oldest)
	}
}

// finish emits a call's result and forgets the call.
func (p *Parser) finish(id string, t int64, res event.Result) {
	delete(p.st.Calls, id)
	p.st.Done = append(p.st.Done, id)
	if n := len(p.st.Done); n > maxDone {
		p.st.Done = p.st.Done[:copy(p.st.Done, p.st.Done[n-maxDone:])]
	}
	p.emit(event.Event{Kind: event.KindResult, T: t, Result: &res})
}

func (p *Parser) isDone(id string) bool {
	for _, d := range p.st.Done {
		if d == id {
			return true
		}
	}
	return false
}

// declareLane emits KindLane for a child thread, again only when a later
// record adds its subagent type or model.
func (p *Parser) declareLane(t int64, lane, launch, satype, model string) {
	model = identifier(model)
	prev, seen := p.st.Lanes[lane]
	prevType, prevModel, _ := strings.Cut(prev, "/")
	satype, model = firstOf(satype, prevType), firstOf(model, prevModel)
	facts := satype + "/" + model
	if seen && facts == prev {
		return
	}
	if p.st.Lanes == nil {
		p.st.Lanes = map[string]string{}
	}
	p.st.Lanes[lane] = facts
	p.emit(event.Event{Kind: event.KindLane, T: t, Agent: lane, Model: model, Lane: &event.Lane{SubagentType: satype, LaunchCallID: launch}})
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
