package agentscope

import (
	"fmt"
	"strings"

	"github.com/agentmap/agentmap/export/mapfile"
)

// action maps one map event onto an action. Reads, searches and web
// fetches read; edits edit; verify commands are tests that passed or
// failed; every other call (shell, MCP, skills, subagents, other tools) is
// a command; a model response that ends with text and asks for no tool is
// a summary. Users' turns, errors, delays and outputs are not actions.
func action(m *mapfile.Map, e *mapfile.Event) (Action, bool) {
	a := Action{Risk: "low", Details: []string{}}
	var what string
	switch e.Kind {
	case "read", "search", "web":
		a.Type = "read_file"
	case "edit":
		a.Type, a.Risk = "edit_file", "medium"
	case "verify":
		a.Type = "test_passed"
		if e.Err {
			a.Type = "test_failed"
		}
	case "exec", "mcp", "skill", "subagent", "tool":
		a.Type = "run_command"
	case "llm":
		if e.ToolCalls > 0 || e.TextChars == 0 {
			return a, false
		}
		a.Type = "generate_summary"
	default:
		return a, false
	}
	what = subject(e)
	a.Title = titleOf(e, what)
	a.Duration = duration(0)
	if e.Dur != nil {
		a.Duration = duration(*e.Dur)
	}
	if f, ok := firstFile(m, e); ok {
		a.File = f
	}
	a.Risk = risk(e, a.Risk)
	a.Details = details(m, e)
	a.Summary = summary(e, a.Title)
	return a, true
}

// subject is the identifier that names what a call did: a shell verb, an
// MCP server/tool, a skill, a subagent type, a web host or the tool name.
func subject(e *mapfile.Event) string {
	switch e.Kind {
	case "exec", "verify":
		if e.Verb != "" {
			return e.Verb
		}
	case "mcp":
		if e.Server != "" {
			return e.Server + "/" + e.Tool
		}
	case "skill":
		if e.Skill != "" {
			return e.Skill
		}
	case "subagent":
		if e.SubagentType != "" {
			return e.SubagentType
		}
	case "web":
		if e.Host != "" {
			return e.Host
		}
	case "llm":
		return e.Model
	}
	return e.Tool
}

func titleOf(e *mapfile.Event, what string) string {
	if what == "" {
		what = e.Kind
	}
	switch e.Kind {
	case "read":
		return "Read with " + what
	case "search":
		return "Search with " + what
	case "web":
		return "Web " + what
	case "edit":
		return "Edit with " + what
	case "exec":
		return "Run " + what
	case "verify":
		return "Verify: " + what
	case "mcp":
		return "MCP " + what
	case "skill":
		return "Skill " + what
	case "subagent":
		return "Subagent " + what
	case "llm":
		return "Response from " + what
	}
	return "Tool " + what
}

func summary(e *mapfile.Event, title string) string {
	switch {
	case e.Kind == "llm":
		return fmt.Sprintf("%s: %d characters of text, %d output tokens.", title, e.TextChars, e.Out)
	case e.Err && e.ErrClass != "":
		return fmt.Sprintf("%s failed (%s).", title, e.ErrClass)
	case e.Err:
		return title + " failed."
	}
	return title + " succeeded."
}

func firstFile(m *mapfile.Map, e *mapfile.Event) (string, bool) {
	for _, t := range e.Targets {
		if t.File != nil {
			if p, ok := m.FilePath(*t.File); ok {
				return p, true
			}
		}
	}
	for _, t := range e.Targets {
		if t.Label != "" {
			return t.Label, true
		}
	}
	return "", false
}

// details are evidence notes made of the map's metadata only.
func details(m *mapfile.Map, e *mapfile.Event) []string {
	d := []string{"kind: " + e.Kind}
	if e.Tool != "" && e.Kind != "llm" {
		d = append(d, "tool: "+e.Tool)
	}
	if e.Cat != "" {
		d = append(d, "category: "+e.Cat)
	}
	if e.Agent != "" && e.Agent != "main" {
		d = append(d, "agent lane: "+e.Agent)
	}
	if n := len(e.Targets); n > 1 {
		var paths []string
		for _, t := range e.Targets {
			if t.File != nil {
				if p, ok := m.FilePath(*t.File); ok {
					paths = append(paths, t.Touch+" "+p)
				}
			} else if t.Label != "" {
				paths = append(paths, t.Touch+" "+t.Label)
			}
		}
		d = append(d, fmt.Sprintf("%d targets: %s", n, strings.Join(paths, ", ")))
	} else if n == 1 {
		d = append(d, "touch: "+e.Targets[0].Touch)
	}
	if e.OutBytes != nil {
		d = append(d, fmt.Sprintf("output: %d bytes (not kept)", *e.OutBytes))
	}
	if e.ExitCode != nil {
		d = append(d, fmt.Sprintf("exit code: %d", *e.ExitCode))
	}
	if e.ErrClass != "" {
		d = append(d, "error class: "+e.ErrClass)
	}
	if e.RetryOf != nil {
		d = append(d, fmt.Sprintf("retry of action at map seq %d", *e.RetryOf))
	}
	if e.VCS != nil && e.VCS.Action != "" {
		d = append(d, "vcs: "+e.VCS.Provider+" "+e.VCS.Action)
	}
	if e.Kind == "llm" {
		d = append(d, fmt.Sprintf("tokens: %d in, %d cache write, %d cache read, %d out", e.In, e.CW, e.CR, e.Out))
		if e.Stop != "" {
			d = append(d, "stop: "+e.Stop)
		}
	}
	return d
}

// risk raises commands that change shared state (pushes, deployments,
// deletions, installs) to medium or high; the map cannot tell production
// code from the rest, so edits stay medium.
func risk(e *mapfile.Event, base string) string {
	if e.Kind != "exec" {
		return base
	}
	switch {
	case e.Verb == "rm" || strings.HasPrefix(e.Verb, "git push") || strings.HasPrefix(e.Verb, "git reset"),
		e.Cat == "cloud":
		return "high"
	case e.Cat == "vcs" || e.Cat == "package" || e.Cat == "http":
		return "medium"
	}
	return base
}
