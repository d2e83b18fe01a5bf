// Package toolkit holds the small pieces the agents whose tools are plain
// JSON calls (OpenCode, Copilot CLI) share: a shell command reduced to its
// call event, what a shell output confirms, lane ids, and identifiers.
// Nothing here keeps text: commands and outputs are read and dropped.
package toolkit

import (
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
)

// Shell is a shell call and what its output may confirm.
type Shell struct {
	Call event.Call
	// PR is the ConfirmPR action of a gh/glab pull-request command, or "".
	PR string
	// Commit is set when the command runs git commit.
	Commit bool
}

// ShellCall classifies a shell command string: exec or verify, its verb,
// category and version-control facet.
func ShellCall(tool, cmd string) Shell {
	sh := redact.ParseShell(cmd)
	c := event.Call{Tool: tool, Kind: sh.Kind(), Cat: sh.Cat, Verb: sh.Verb, VCS: sh.VCS}
	if c.Cat == "" {
		c.Cat = "shell"
	}
	s := Shell{Call: c, Commit: sh.Commits}
	if v := sh.VCS; v != nil && (v.Provider == "github" || v.Provider == "gitlab" || v.Provider == "bitbucket") {
		if noun, verb, ok := strings.Cut(v.Action, "_"); ok && (noun == "pr" || noun == "mr") {
			switch verb {
			case "create", "merge", "close", "comment":
				s.PR = verb
			}
		}
	}
	return s
}

// Confirm attaches to a shell result what its output confirms: a PR URL
// printed by gh or glab, or git commit's summary. cwdRepo is the repo key of
// the command's working directory.
func (s Shell) Confirm(res *event.Result, output, cwdRepo string) {
	if s.PR != "" {
		res.PR = redact.ConfirmPR(output, s.PR)
	}
	if s.Commit && !res.Err {
		if cm := redact.ConfirmCommit(output); cm != nil {
			if cm.Repo == "" {
				cm.Repo = cwdRepo
			}
			res.Commit = cm
		}
	}
}

// LaneID is the lane id of a subagent whose own id is native: "sa-" and
// the last 12 letters and digits of it, lower-cased (the random tail of
// uuids and of OpenCode's ids; their heads are timestamps).
func LaneID(native string) string {
	var b []byte
	for i := 0; i < len(native); i++ {
		c := native[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z':
			b = append(b, c)
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		}
	}
	if len(b) == 0 {
		return ""
	}
	if len(b) > 12 {
		b = b[len(b)-12:]
	}
	return "sa-" + string(b)
}

// Identifier returns s when it is an identifier that may appear in a map
// (a tool, model, agent type or server name: letters, digits and
// "_-.:/@" up to 128 bytes), else "".
func Identifier(s string) string {
	if s == "" || len(s) > 128 {
		return ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_' || c == '-' || c == '.' || c == ':' || c == '/' || c == '@':
		default:
			return ""
		}
	}
	return s
}

// ImageMIME reports whether a MIME type is an image's.
func ImageMIME(mime string) bool { return strings.HasPrefix(strings.ToLower(mime), "image/") }
