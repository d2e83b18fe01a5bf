package claude

import (
	"encoding/json"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
)

// toolInput declares the only input keys a map may use. Everything else
// in a tool input (contents, old/new strings, prompts, descriptions,
// queries) is skipped by the decoder.
type toolInput struct {
	FilePath     json.RawMessage `json:"file_path"`
	NotebookPath json.RawMessage `json:"notebook_path"`
	Path         json.RawMessage `json:"path"`
	Pattern      json.RawMessage `json:"pattern"`
	Command      json.RawMessage `json:"command"`
	URL          json.RawMessage `json:"url"`
	SubagentType json.RawMessage `json:"subagent_type"`
	Model        json.RawMessage `json:"model"` // Agent/Task: the model asked for
	Skill        json.RawMessage `json:"skill"`
}

// call turns a tool_use block into a call record and remembers what its
// result will need.
func (p *Parser) call(b *block) event.Event {
	name := ident(b.Name)
	if name == "" {
		name = "unknown"
	}
	cls := redact.ClassifyTool(name)
	c := &event.Call{ID: ident(b.ID), Tool: name, Kind: cls.Kind, Cat: cls.Cat, Server: cls.Server, MCPTool: cls.MCPTool}
	pc := pending{ID: c.ID}

	var in toolInput
	if isObject(b.Input) {
		// An input of the wrong shape only loses its targets.
		_ = read(toolInputFields, b.Input, &in)
	}
	switch canonicalTool(name) {
	case "Read", "NotebookRead":
		p.target(c, firstString(in.FilePath, in.NotebookPath), "read", "")
	case "Write":
		path := str(in.FilePath)
		op := "modify"
		if path != "" && !p.st.Touched[touchKey(p.paths.Target(path, "edit", ""))] {
			op = "create"
		}
		p.target(c, path, "edit", op)
		c.SkillWrite = skillWrite(path)
	case "Edit", "MultiEdit", "NotebookEdit":
		path := firstString(in.FilePath, in.NotebookPath)
		p.target(c, path, "edit", "modify")
		c.SkillWrite = skillWrite(path)
	case "Grep", "LS":
		p.target(c, str(in.Path), "hit", "")
	case "Glob":
		if path := str(in.Path); path != "" {
			p.target(c, path, "hit", "")
		} else {
			p.target(c, globDir(str(in.Pattern)), "hit", "")
		}
	case "Bash", "PowerShell":
		cmd := str(in.Command)
		sh := redact.ParseShell(cmd)
		c.Kind, c.Cat, c.Verb, c.VCS = sh.Kind(), sh.Cat, sh.Verb, sh.VCS
		pc.Shell = true
		pc.PR = prAction(sh.VCS, cmd)
		pc.Commit = strings.Contains(cmd, "commit")
		pc.GitCommit, pc.Head = sh.Commits, sh.ShowsHead
	case "Agent":
		c.SubagentType = ident(str(in.SubagentType))
		if c.SubagentType == "" {
			// The tool's own default when the model names no type.
			c.SubagentType = "general-purpose"
		}
		c.SubagentModel = modelName(str(in.Model))
		pc.Subagent = true
	case "Skill":
		c.Skill = skillName(firstString(in.Skill, in.Command))
	case "SlashCommand":
		c.Skill = skillName(str(in.Command))
	case "WebFetch", "web_fetch":
		c.Host = redact.Host(str(in.URL))
		pc.Fetch = true
	case "WebSearch", "web_search":
		c.Host = "search"
	case "AskUserQuestion", "ExitPlanMode":
		// The call returns when the user answers or rules on the plan.
		c.AwaitsUser = true
	}
	if c.Kind == "" {
		c.Kind, c.Cat = "tool", "tool"
	}
	if c.ID != "" {
		p.st.addCall(pc)
	}
	e := p.ev(event.KindCall)
	e.Call = c
	return e
}

// legacyNames maps old tool names to the current ones (the CLI's own alias
// table); the call keeps the name the log used.
var legacyNames = map[string]string{
	"Task":      "Agent",
	"KillShell": "TaskStop",
	"KillBash":  "TaskStop",
}

func canonicalTool(name string) string {
	if n, ok := legacyNames[name]; ok {
		return n
	}
	return name
}

// target resolves path into a target of c and records the touch.
func (p *Parser) target(c *event.Call, path, touch, op string) {
	if path == "" {
		return
	}
	t := p.paths.Target(path, touch, op)
	c.Targets = append(c.Targets, t)
	if touch != "hit" {
		p.st.touch(touchKey(t))
	}
}

func touchKey(t event.Target) string {
	if t.Path != "" {
		return t.Repo + "\x00" + t.Path
	}
	return "\x00" + t.Label
}

func firstString(raws ...json.RawMessage) string {
	for _, r := range raws {
		if s := str(r); s != "" {
			return s
		}
	}
	return ""
}

func skillWrite(path string) string {
	if path == "" {
		return ""
	}
	return ident(redact.SkillWrite(path))
}

// skillName keeps the name of a skill or slash command: the first word,
// without the slash. Arguments are text and never kept, whatever blank
// parts them from the name (a no-break space too).
func skillName(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexFunc(s, event.Hidden); i >= 0 {
		s = s[:i]
	}
	return ident(strings.TrimPrefix(s, "/"))
}

// globDir is the literal directory part of a glob pattern ("src/**/*.go"
// gives "src"): the part of the pattern that names a place, not a match.
func globDir(pattern string) string {
	i := strings.IndexAny(pattern, "*?[{")
	if i < 0 {
		return ""
	}
	dir := pattern[:i]
	j := strings.LastIndexAny(dir, `/\`)
	if j <= 0 {
		return ""
	}
	return dir[:j]
}

// prAction is the PR confirmation a shell command may print: from the
// parsed VCS facet, or for compound commands from the command itself.
func prAction(vcs *event.VCS, cmd string) string {
	if vcs != nil {
		for _, verb := range []string{"create", "merge", "close", "comment"} {
			if vcs.Action == "pr_"+verb || vcs.Action == "mr_"+verb {
				return verb
			}
		}
	}
	for _, verb := range []string{"create", "merge", "close", "comment"} {
		if strings.Contains(cmd, "pr "+verb) || strings.Contains(cmd, "mr "+verb) {
			return verb
		}
	}
	return ""
}

// serverResult completes a server-side tool call (web search or fetch run
// by the API itself) from its result block in the assistant message.
func (p *Parser) serverResult(b *block) event.Event {
	p.st.takeCall(b.ToolUseID)
	r := &event.Result{CallID: ident(b.ToolUseID)}
	r.OutBytes = contentBytes(b.Content, b.contentLen)
	e := p.ev(event.KindResult)
	e.Result = r
	return e
}

// modelName keeps a model name or alias ("haiku", "claude-sonnet-4-5") and
// drops anything else a model could have written in its place.
func modelName(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return ""
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			i > 0 && (r == '-' || r == '.' || r == '_' || r == ':' || r == '@' || r == '[' || r == ']')
		if !ok {
			return ""
		}
	}
	return s
}
