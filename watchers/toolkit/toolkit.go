// Package toolkit holds the small pieces the agents whose tools are plain
// JSON calls (OpenCode, Copilot CLI) share: a shell command reduced to its
// call event and what a shell output confirms. (Identifiers and lane ids:
// watchers.Ident and watchers.LaneID.)
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

// ImageMIME reports whether a MIME type is an image's.
func ImageMIME(mime string) bool { return strings.HasPrefix(strings.ToLower(mime), "image/") }
