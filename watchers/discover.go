package watchers

import (
	"os"
	"path/filepath"
	"strings"
)

// Forms of log files: how the daemon reads each.
const (
	FormLines  = "lines"  // appended JSONL, tailed from a cursor
	FormWhole  = "whole"  // written once (.jsonl.zst, single-document .json): re-read whole on change
	FormSQLite = "sqlite" // a Cursor database, polled read-only
)

// Layouts of the directory trees agents write under.
const (
	LayoutClaude    = "claude"     // a Claude config dir: projects/<slug>/…
	LayoutCodex     = "codex"      // a Codex home: sessions/YYYY/MM/DD/…, archived_sessions/
	LayoutCursor    = "cursor"     // ~/.cursor: projects/<slug>/agent-transcripts/…, chats/<hash>/<id>/store.db
	LayoutCursorApp = "cursor-app" // Cursor's User dir: globalStorage/ and workspaceStorage/*/ state.vscdb
	LayoutOpenCode  = "opencode"   // OpenCode's data dir: opencode.db (opencode-<channel>.db)
	LayoutCopilot   = "copilot"    // a Copilot CLI home: session-state/<id>/events.jsonl
	LayoutGemini    = "gemini"     // a Gemini CLI dir (~/.gemini): tmp/<project>/chats/…
)

// Root is one directory tree an agent writes its logs under.
type Root struct {
	Agent  string // claude, codex, cursor
	Layout string
	Dir    string
}

// split returns the slash-separated parts of path below the root, or nil
// when path is not under it.
func (r Root) split(path string) ([]string, bool) {
	rel, err := filepath.Rel(r.Dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, false
	}
	if rel == "." {
		return nil, true
	}
	return strings.Split(filepath.ToSlash(rel), "/"), true
}

// Descend reports whether a directory may hold logs of the root (and so is
// walked and watched). The root itself always is.
func (r Root) Descend(dir string) bool {
	p, ok := r.split(dir)
	if !ok {
		return false
	}
	if len(p) == 0 {
		return true
	}
	switch r.Layout {
	case LayoutClaude:
		// projects / <slug> / <session> / subagents / …
		if p[0] != "projects" {
			return false
		}
		switch len(p) {
		case 1, 2:
			return true
		case 3:
			return p[2] != "tool-results" && p[2] != "memory"
		default:
			return p[3] == "subagents"
		}
	case LayoutCodex:
		return p[0] == "sessions" || p[0] == "archived_sessions"
	case LayoutCursor:
		switch p[0] {
		case "projects":
			return len(p) <= 2 || p[2] == "agent-transcripts"
		case "chats":
			return len(p) <= 3
		}
		return false
	case LayoutCursorApp:
		switch p[0] {
		case "globalStorage":
			return len(p) == 1
		case "workspaceStorage":
			return len(p) <= 2
		}
	case LayoutOpenCode:
		// The store sits in the root itself; the JSON storage of older
		// versions in storage/session/<project>/.
		return p[0] == "storage" && (len(p) == 1 || p[1] == "session" && len(p) <= 3)
	case LayoutCopilot:
		return p[0] == "session-state" && len(p) <= 2
	case LayoutGemini:
		// tmp / <project> / chats / <parent session> (subagents)
		return p[0] == "tmp" && (len(p) <= 2 || p[2] == "chats" && len(p) <= 4)
	}
	return false
}

// Meets reports whether a walk of the root would meet the file at path
// (as the walk names it: the root's directory and the path below it), and
// in which form: below the root, in directories it descends, a log it
// follows. A walk may still not reach it (a directory that cannot be
// read, a name of a directory followed under another).
func (r Root) Meets(path string) (form string, ok bool) {
	p, ok := r.split(path)
	if !ok || len(p) == 0 {
		return "", false
	}
	dir := r.Dir
	for _, part := range p[:len(p)-1] {
		if dir = filepath.Join(dir, part); !r.Descend(dir) {
			return "", false
		}
	}
	form = r.Form(path)
	return form, form != ""
}

// Form returns how a file under the root is read, or "" when it is not a
// log this root follows. A rotated copy of a line log (log.1, log.2, …,
// left by copy-truncate rotation) is followed too, as part of the same
// session.
func (r Root) Form(path string) string {
	if base, n := Rotation(path); n > 0 {
		if r.form(base) == FormLines {
			return FormLines
		}
		return ""
	}
	return r.form(path)
}

// Rotation splits a rotated copy's name into the log's name and its
// rotation number (log.jsonl.2 → log.jsonl, 2); a name with no rotation
// suffix comes back whole, with 0. The higher the number, the older the
// copy.
func Rotation(path string) (string, int) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 || i == len(path)-1 || len(path)-i > 4 || path[i+1] == '0' {
		return path, 0
	}
	n := 0
	for _, c := range path[i+1:] {
		if c < '0' || c > '9' {
			return path, 0
		}
		n = n*10 + int(c-'0')
	}
	return path[:i], n
}

// RotationOrder compares two log names for reading one session's files in
// order: by name without rotation suffix, then oldest copy first (log.2,
// log.1, log).
func RotationOrder(a, b string) int {
	ab, an := Rotation(a)
	bb, bn := Rotation(b)
	if c := strings.Compare(ab, bb); c != 0 {
		return c
	}
	return bn - an
}

func (r Root) form(path string) string {
	p, ok := r.split(path)
	if !ok || len(p) == 0 {
		return ""
	}
	name := p[len(p)-1]
	switch r.Layout {
	case LayoutClaude:
		if p[0] != "projects" || !strings.HasSuffix(name, ".jsonl") {
			return ""
		}
		if len(p) == 3 {
			return FormLines
		}
		if len(p) >= 5 && p[3] == "subagents" && strings.HasPrefix(name, "agent-") {
			return FormLines
		}
	case LayoutCodex:
		if (p[0] != "sessions" && p[0] != "archived_sessions") || !strings.HasPrefix(name, "rollout-") {
			return ""
		}
		switch {
		case strings.HasSuffix(name, ".jsonl"):
			return FormLines
		case strings.HasSuffix(name, ".jsonl.zst"), strings.HasSuffix(name, ".json"):
			return FormWhole
		}
	case LayoutCursor:
		if p[0] == "projects" && len(p) >= 4 && p[2] == "agent-transcripts" && strings.HasSuffix(name, ".jsonl") {
			return FormLines
		}
		if p[0] == "chats" && len(p) == 4 && name == "store.db" {
			return FormSQLite
		}
	case LayoutGemini:
		if p[0] != "tmp" || len(p) < 4 || p[2] != "chats" {
			return ""
		}
		switch {
		case len(p) == 4 && strings.HasPrefix(name, "session-") && strings.HasSuffix(name, ".jsonl"):
			return FormLines
		case len(p) == 4 && strings.HasPrefix(name, "session-") && strings.HasSuffix(name, ".json"):
			return FormWhole // the whole-document form of older clients
		case len(p) == 5 && strings.HasSuffix(name, ".jsonl"):
			return FormLines // a subagent's conversation
		}
	case LayoutCursorApp:
		if name == "state.vscdb" && ((p[0] == "globalStorage" && len(p) == 2) || (p[0] == "workspaceStorage" && len(p) == 3)) {
			return FormSQLite
		}
	case LayoutOpenCode:
		if len(p) == 1 && (name == "opencode.db" || strings.HasPrefix(name, "opencode-") && strings.HasSuffix(name, ".db")) {
			return FormSQLite
		}
		// A session of the JSON storage is read whole, with its messages
		// and parts, like a database.
		if len(p) == 4 && p[0] == "storage" && p[1] == "session" && strings.HasSuffix(name, ".json") {
			return FormSQLite
		}
	case LayoutCopilot:
		// session-state/<id>/events.jsonl; the first releases wrote
		// session-state/<id>.jsonl.
		if p[0] == "session-state" && (len(p) == 3 && name == "events.jsonl" || len(p) == 2 && strings.HasSuffix(name, ".jsonl")) {
			return FormLines
		}
	}
	return ""
}

// Archived reports whether a path is in a place an agent moves finished
// sessions to (Codex archived_sessions/): arriving there ends a session.
func (r Root) Archived(path string) bool {
	if r.Layout != LayoutCodex {
		return false // asked of every log a rescan stats: no path work for the others
	}
	p, ok := r.split(path)
	return ok && len(p) > 0 && p[0] == "archived_sessions"
}

// Env is an OS, home directory and environment, what a default directory
// depends on, so that tests can pin it.
type Env struct {
	GOOS   string
	Home   string
	Getenv func(string) string
}

// OverrideRoots replaces the default roots of the agents named in
// overrides ("claude", "codex", "cursor", "cursor-app", "opencode",
// "copilot": dir).
func OverrideRoots(roots []Root, overrides map[string][]string) []Root {
	if len(overrides) == 0 {
		return roots
	}
	var out []Root
	for _, r := range roots {
		if _, ok := overrides[r.Layout]; !ok {
			out = append(out, r)
		}
	}
	for _, layout := range []string{LayoutClaude, LayoutCodex, LayoutCursor, LayoutCursorApp, LayoutOpenCode, LayoutCopilot, LayoutGemini} {
		for _, d := range overrides[layout] {
			agent := layout
			if layout == LayoutCursorApp {
				agent = "cursor"
			}
			out = append(out, Root{Agent: agent, Layout: layout, Dir: filepath.Clean(d)})
		}
	}
	return UniqueRoots(out)
}

// UniqueRoots leaves out a root given again (a directory listed twice, or
// once with a trailing slash), keeping the first: its logs are one agent's
// logs once. A walk meets a directory once whatever the roots; this keeps
// the roots told to the user as they are followed.
func UniqueRoots(roots []Root) []Root {
	out := roots[:0:0]
	seen := make(map[Root]bool, len(roots))
	for _, r := range roots {
		r.Dir = filepath.Clean(r.Dir)
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// OSEnv is the environment of this process.
func OSEnv(goos string) Env {
	home, _ := os.UserHomeDir()
	return Env{GOOS: goos, Home: home, Getenv: os.Getenv}
}
