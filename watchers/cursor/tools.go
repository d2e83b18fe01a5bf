package cursor

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// toolClass is what a Cursor tool name says about a call. Cursor names
// change from build to build (read_file, read_file_v2, ReadFile), so they
// are matched case-insensitively, and names this table does not know go to
// redact.ClassifyTool, which knows the other agents' names and MCP forms.
type toolClass struct {
	kind string // read, search, edit, exec, web, subagent, tool
	op   string // target op for edits: modify, delete; "" when unknown
}

var cursorTools = map[string]toolClass{
	"read": {kind: "read"}, "readfile": {kind: "read"}, "read_file": {kind: "read"},
	"read_file_v2": {kind: "read"},

	"grep": {kind: "search"}, "rg": {kind: "search"}, "ripgrep": {kind: "search"},
	"ripgrep_raw_search": {kind: "search"}, "grep_search": {kind: "search"},
	"codebase_search": {kind: "search"}, "semantic_search_full": {kind: "search"},
	"semanticsearch": {kind: "search"}, "file_search": {kind: "search"},
	"list_dir": {kind: "search"}, "list_dir_v2": {kind: "search"}, "ls": {kind: "search"},
	"glob": {kind: "search"}, "glob_file_search": {kind: "search"},
	"listdir": {kind: "search"}, "globfilesearch": {kind: "search"}, "grepsearch": {kind: "search"},
	"codebasesearch": {kind: "search"}, "filesearch": {kind: "search"},

	"write": {kind: "edit"}, "edit": {kind: "edit", op: "modify"},
	"edit_file": {kind: "edit", op: "modify"}, "edit_file_v2": {kind: "edit", op: "modify"},
	"search_replace": {kind: "edit", op: "modify"}, "strreplace": {kind: "edit", op: "modify"},
	"str_replace": {kind: "edit", op: "modify"}, "multiedit": {kind: "edit", op: "modify"},
	"editnotebook": {kind: "edit", op: "modify"}, "edit_notebook": {kind: "edit", op: "modify"},
	"applypatch": {kind: "edit"}, "apply_patch": {kind: "edit"},
	"delete": {kind: "edit", op: "delete"}, "delete_file": {kind: "edit", op: "delete"},
	"deletefile": {kind: "edit", op: "delete"}, "editfile": {kind: "edit", op: "modify"},
	"searchreplace": {kind: "edit", op: "modify"},

	"shell": {kind: "exec"}, "run_terminal_cmd": {kind: "exec"},
	"run_terminal_command": {kind: "exec"}, "run_terminal_command_v2": {kind: "exec"},
	"runterminalcmd": {kind: "exec"}, "runterminalcommand": {kind: "exec"},

	"web_search": {kind: "web"}, "websearch": {kind: "web"},
	"web_fetch": {kind: "web"}, "webfetch": {kind: "web"}, "fetch": {kind: "web"},

	"subagent": {kind: "subagent"}, "task": {kind: "subagent"}, "task_v2": {kind: "subagent"},
	"agent": {kind: "subagent"},
}

// kindCat is the default category of a map kind.
var kindCat = map[string]string{
	"read": "file", "search": "file", "edit": "file", "exec": "shell",
	"web": "web", "subagent": "subagent", "skill": "skill", "mcp": "mcp", "tool": "tool",
}

// Keys of tool inputs whose values may be kept: each holds one path.
// Everything else in an input (contents, patterns, queries, prompts) is text.
var pathKeys = []string{
	"path", "file_path", "filePath", "target_file", "targetFile",
	"relativeWorkspacePath", "relative_workspace_path", "directoryPath",
	"directory_path", "target_directory", "targetDirectory", "notebook_path",
	"effectiveUri", "uri",
}

// listKeys hold arrays of paths.
var listKeys = []string{"paths", "target_files", "targetFiles"}

// input is a decoded tool input: only its keys are decoded, values stay raw
// until a whitelisted key asks for one.
type input map[string]json.RawMessage

// decodeInput accepts an object or a JSON string holding an object (Cursor's
// rawArgs and params are JSON text inside JSON).
func decodeInput(raw json.RawMessage) input {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		raw = []byte(s)
	}
	var in input
	if json.Unmarshal(raw, &in) != nil {
		return nil
	}
	return in
}

// str returns the string value of key, or "".
func (in input) str(key string) string {
	v, ok := in[key]
	if !ok || len(v) == 0 || v[0] != '"' {
		return ""
	}
	s, _ := jsonscan.String(v)
	return s
}

// keptKeys are the input keys any source reads: paths, the shell command
// and its working directory, a URL, the subagent type and the model it
// asks for, the skill name.
// Each maps to itself, so that a walk that finds one in a line's bytes
// stores it without allocating the key again.
var keptKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range append(append([]string{"command", "working_directory", "url",
		"subagent_type", "subagentType", "model", "skill"}, pathKeys...), listKeys...) {
		m[k] = k
	}
	return m
}()

// reduce keeps only the keys a call may use, so that no other input value
// (file contents, prompts, patterns) is held past decoding.
func (in input) reduce() input {
	out := make(input, 4)
	for k, v := range in {
		if _, ok := keptKeys[k]; ok {
			out[k] = v
		}
	}
	return out
}

// paths returns the path values of the whitelisted keys, in key order.
func (in input) paths() []string {
	var out []string
	for _, k := range pathKeys {
		if s := in.str(k); s != "" {
			out = append(out, uriPath(s))
		}
	}
	for _, k := range listKeys {
		v, ok := in[k]
		if !ok {
			continue
		}
		var list []string
		if json.Unmarshal(v, &list) != nil {
			continue
		}
		for _, s := range list {
			if s != "" {
				out = append(out, uriPath(s))
			}
		}
	}
	return out
}

// uriPath turns a file:// URI into a path; other strings pass unchanged.
func uriPath(s string) string {
	if !strings.HasPrefix(s, "file:") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	p := u.Path
	// file:///c%3A/Users/... is a Windows path.
	if len(p) > 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:]
	}
	return p
}

// callSpec is what a source knows about one tool call before it becomes an
// event: the name and the inputs to read whitelisted keys from, most
// authoritative first (Cursor's params before rawArgs).
type callSpec struct {
	id     string
	name   string
	inputs []input
	// files are the file headers of an apply_patch text given as a bare
	// string input (patched is set even when it names none).
	files   []patchFile
	patched bool
}

// buildCall classifies a call and resolves its targets. New repos the paths
// reveal are appended to out as KindRepo events before the call, so the
// builder meets each repo before the first target that uses it.
func buildCall(s callSpec, paths *redact.Paths, t int64, agent string, out []event.Event) (event.Call, []event.Event) {
	// The tool's name, the subagent type and the skill are the model's
	// own words: kept only with the shape of an identifier, like every
	// other agent's (a sentence there would be text in the map).
	name := watchers.Ident(s.name)
	c := event.Call{ID: s.id, Tool: name}
	cls, known := cursorTools[strings.ToLower(name)]
	if known {
		c.Kind = cls.kind
	} else {
		tc := redact.ClassifyTool(name)
		c.Kind, c.Cat, c.Server, c.MCPTool = tc.Kind, tc.Cat, tc.Server, tc.MCPTool
	}
	if c.Kind == "" {
		c.Kind = "tool"
	}
	if c.Cat == "" {
		c.Cat = kindCat[c.Kind]
	}

	switch c.Kind {
	case "exec":
		for _, in := range s.inputs {
			if wd := in.str("working_directory"); wd != "" {
				paths.SetCWD(wd)
				break
			}
		}
		for _, in := range s.inputs {
			if cmd := in.str("command"); cmd != "" {
				sh := redact.ParseShell(cmd)
				c.Verb, c.Kind, c.VCS = sh.Verb, sh.Kind(), sh.VCS
				if sh.Cat != "" {
					c.Cat = sh.Cat
				}
				break
			}
		}
	case "web":
		c.Host = "search"
		for _, in := range s.inputs {
			if u := in.str("url"); u != "" {
				c.Host = redact.Host(u)
				break
			}
		}
	case "subagent":
		for _, in := range s.inputs {
			if st := watchers.Ident(in.str("subagent_type")); st != "" {
				c.SubagentType = st
				break
			}
			if st := watchers.Ident(in.str("subagentType")); st != "" {
				c.SubagentType = st
				break
			}
		}
		for _, in := range s.inputs {
			// The model the call asks for ("fast", or a model name).
			if m := watchers.Ident(in.str("model")); m != "" {
				c.SubagentModel = m
				break
			}
		}
	case "skill":
		for _, in := range s.inputs {
			if sk := watchers.Ident(in.str("skill")); sk != "" {
				c.Skill = sk
				break
			}
		}
	case "read", "search", "edit":
		touch := map[string]string{"read": "read", "search": "hit", "edit": "edit"}[c.Kind]
		files := s.files
		if !s.patched {
			for _, in := range s.inputs {
				if ps := in.paths(); len(ps) > 0 {
					for _, p := range ps {
						files = append(files, patchFile{path: p, op: cls.op})
					}
					break
				}
			}
		}
		seen := map[event.Target]bool{}
		for _, f := range files {
			tg := paths.Target(f.path, touch, f.op)
			if tg.Path == "" && tg.Label == "" {
				continue
			}
			if seen[tg] {
				continue
			}
			seen[tg] = true
			c.Targets = append(c.Targets, tg)
			if sw := redact.SkillWrite(f.path); sw != "" && c.Kind == "edit" && c.SkillWrite == "" {
				c.SkillWrite = sw
			}
		}
	}
	out = appendRepos(paths, t, agent, out)
	return c, out
}

// appendRepos emits a KindRepo event for every repo the resolver met since
// the last call.
func appendRepos(paths *redact.Paths, t int64, agent string, out []event.Event) []event.Event {
	for _, r := range paths.NewRepos() {
		r := r
		out = append(out, event.Event{Kind: event.KindRepo, T: t, Agent: agent, Repo: &r})
	}
	return out
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
