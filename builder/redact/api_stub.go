package redact

// This file fixes the API of the package so that parsers can be written
// against it. Every function here is to be implemented for real (and this
// comment removed) by the owner of builder/redact.

import "github.com/agentmap/agentmap/builder/event"

// Paths resolves the paths seen in one session into redacted targets. It is
// per session, remembers the cwds and repos it has seen (its carry-state is
// serialisable with MarshalState / RestorePaths), and never keeps an absolute
// path in any value it returns.
type Paths struct{}

// NewPaths returns a resolver with no history.
func NewPaths() *Paths { return &Paths{} }

// RestorePaths restores a resolver from MarshalState's output.
func RestorePaths(state []byte) (*Paths, error) { return &Paths{}, nil }

// MarshalState serialises the resolver's carry-state.
func (p *Paths) MarshalState() ([]byte, error) { return nil, nil }

// SetCWD records the working directory of the current record. Relative paths
// passed to Target are resolved against it.
func (p *Paths) SetCWD(cwd string) {}

// Target resolves a path (absolute, or relative to the current cwd; POSIX or
// Windows form) into a target with the given touch (hit, read, edit) and op.
func (p *Paths) Target(path, touch, op string) event.Target { return event.Target{} }

// NewRepos returns the repos first seen since the previous call, so that the
// parser can emit a KindRepo event for each before the events that use them.
func (p *Paths) NewRepos() []event.Repo { return nil }

// CWDRepo returns the key of the repo of the current cwd, or "" outside repos.
func (p *Paths) CWDRepo() string { return "" }

// Shell is what a shell command may contribute to a map.
type Shell struct {
	Verb   string     // program basename plus subcommand for multi-verb tools
	Cat    string     // vcs, test, build, package, http, cloud, fs, shell
	Verify bool       // a test, build, lint or type check
	VCS    *event.VCS // git/gh/glab operation, if any
}

// Kind is the map event kind of the command: verify or exec.
func (s Shell) Kind() string {
	if s.Verify {
		return "verify"
	}
	return "exec"
}

// ParseShell extracts the verb of a shell command string with a real shell
// parser. It never returns any argument beyond the subcommand.
func ParseShell(cmd string) Shell { return Shell{Cat: "shell"} }

// ParseArgv extracts the verb of an argv vector (bash -lc scripts recurse).
func ParseArgv(argv []string) Shell { return Shell{Cat: "shell"} }

// Tool is the classification of a tool name.
type Tool struct {
	Kind    string // read, search, edit, exec, web, subagent, skill, mcp, tool
	Cat     string // file, shell, web, subagent, skill, mcp, tool, ...
	Server  string // mcp only
	MCPTool string // mcp only
}

// ClassifyTool maps a tool name of any agent to its map kind and category.
// MCP names (mcp__server__tool, server__tool where the server is known, and
// the like) come back as kind mcp with server and tool split.
func ClassifyTool(name string) Tool { return Tool{Kind: "tool", Cat: "tool"} }

// Host returns the host name of a URL, lower-cased, or "" if there is none.
func Host(rawURL string) string { return "" }

// CountURLs counts http(s) URLs in a text without keeping any of them.
func CountURLs(text string) int { return 0 }

// ConfirmPR finds a PR/MR URL printed by gh/glab in a tool output.
func ConfirmPR(output string, action string) *event.PR { return nil }

// ConfirmCommit finds git commit's "[branch sha]" and "N files changed"
// summary lines in a tool output.
func ConfirmCommit(output string) *event.Commit { return nil }

// ErrorClass maps the text of a failed tool result to one of the format
// page's tool errClass values (exit_code, timeout, not_found, validation,
// needs_approval, permission_denied, blocked, patch_failed, stale_file, …,
// other). The text is read, never kept.
func ErrorClass(text string) string { return "other" }

// APIErrorClass maps an API error (status, error type or message) to one of
// the error-event classes (rate_limit, usage_limit, spend_limit, overloaded,
// server_error, auth, bad_request, api_error, …).
func APIErrorClass(text string) string { return "api_error" }

// SkillWrite returns the skill name when a path is a skill definition file
// (.claude/skills/<name>/SKILL.md and the like), else "".
func SkillWrite(path string) string { return "" }

// Mode is a path mode of the format page.
type Mode string

const (
	ModeRelative Mode = "relative"
	ModeDirsOnly Mode = "dirs_only"
	ModeHashed   Mode = "hashed"
)

// Renderer applies a path mode to repo-relative paths when a map is written.
type Renderer struct{}

// NewRenderer returns a renderer; hashed without a key falls back to dirs_only.
func NewRenderer(mode Mode, key []byte) *Renderer { return &Renderer{} }

// Mode is the mode actually applied (for session.pathMode).
func (r *Renderer) Mode() Mode { return ModeRelative }

// Path renders one repo-relative path.
func (r *Renderer) Path(rel string) string { return rel }
