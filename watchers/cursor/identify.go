package cursor

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentmap/agentmap/watchers"
)

// AgentTool is the session.agentTool of Cursor maps.
const AgentTool = "cursor"

// Identify routes an agent transcript from its path:
//
//	…/agent-transcripts/<uuid>/<uuid>.jsonl            session <uuid>
//	…/agent-transcripts/<uuid>.jsonl                   session <uuid>
//	…/agent-transcripts/<parent>/subagents/<uuid>.jsonl session <parent>, lane LaneID(<uuid>)
//
// A subagent transcript is a lane of its parent's map, as Claude subagent
// files are: Cursor writes no id that would link it to the parent's Subagent
// call, so the builder pairs such lanes with the parent's launches in order
// (see the package doc). firstLine may be empty (a file
// created before its first line is complete); when it is not, it must look
// like a transcript line. Legacy plain-text transcripts (*.txt) are refused.
func Identify(path string, firstLine []byte) (watchers.Source, error) {
	p := slashes(path)
	base := p[strings.LastIndexByte(p, '/')+1:]
	if !strings.HasSuffix(base, ".jsonl") || len(base) == len(".jsonl") {
		return watchers.Source{}, errors.New("cursor: not a .jsonl agent transcript")
	}
	if len(bytes.TrimSpace(firstLine)) > 0 && !LooksLike(firstLine) {
		return watchers.Source{}, errors.New("cursor: first line is not an agent transcript line")
	}
	id := strings.TrimSuffix(base, ".jsonl")
	src := watchers.Source{Agent: "cursor", Session: id}
	dir := strings.Split(strings.TrimSuffix(p, "/"+base), "/")
	if n := len(dir); n >= 2 && dir[n-1] == "subagents" && dir[n-2] != "" {
		src.Session = dir[n-2]
		src.Lane = LaneID(id)
	}
	return src, nil
}

// LaneID is the map lane id of a subagent transcript: "sa-" and the first 12
// hex digits of its uuid, the length Claude lane ids have.
func LaneID(id string) string {
	h := strings.ReplaceAll(strings.ToLower(id), "-", "")
	if len(h) > 12 {
		h = h[:12]
	}
	return "sa-" + h
}

// LooksLike reports whether a first line is a Cursor agent-transcript line:
// a top-level "role" of user or assistant with a "message" (Claude lines put
// the role inside "message" and carry "type", "uuid", "sessionId"; Codex
// lines carry "type" and "payload"), or a {"type":"turn_ended"} marker.
func LooksLike(firstLine []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(firstLine, &top) != nil {
		return false
	}
	for _, k := range []string{"sessionId", "uuid", "payload", "timestamp", "parentUuid"} {
		if _, ok := top[k]; ok {
			return false
		}
	}
	var role, typ string
	if v, ok := top["role"]; ok && json.Unmarshal(v, &role) != nil {
		return false
	}
	if v, ok := top["type"]; ok && json.Unmarshal(v, &typ) != nil {
		return false
	}
	if typ == "turn_ended" {
		return true
	}
	if typ != "" {
		return false
	}
	_, hasMsg := top["message"]
	return hasMsg && (role == "user" || role == "assistant")
}

// ProjectOf returns the project folder name (<slug>) of a transcript under
// ~/.cursor/projects/<slug>/agent-transcripts/, or "".
func ProjectOf(path string) string {
	parts := strings.Split(slashes(path), "/")
	for i := len(parts) - 1; i > 0; i-- {
		if parts[i] == "agent-transcripts" {
			return parts[i-1]
		}
	}
	return ""
}

// slugKey normalises a slug, or a path turned into one, for comparison:
// Cursor drops the leading separator and turns separators into '-'; other
// punctuation is folded to '-' too, runs of '-' to one, and case is
// ignored, so that a rule we have not seen (dots, spaces, drive colons)
// still compares equal on both sides.
func slugKey(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r < 128 && !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			if !dash {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		dash = false
		b.WriteRune(r)
	}
	return strings.Trim(b.String(), "-")
}

// slashes turns Windows separators into '/', whatever the OS the log is
// read on.
func slashes(p string) string {
	return strings.ReplaceAll(p, "\\", "/")
}

// rootFor returns the prefix of an absolute path whose slug is the project
// slug: the workspace root the transcript belongs to, recovered exactly
// even though the slug alone is ambiguous.
func rootFor(path, project string) string {
	if project == "" || path == "" {
		return ""
	}
	p := slashes(path)
	if !strings.HasPrefix(p, "/") && !(len(p) > 2 && p[1] == ':') {
		return ""
	}
	want := slugKey(project)
	for i := len(p); i > 0; i-- {
		if i < len(p) && p[i] != '/' {
			continue
		}
		if slugKey(p[:i]) == want {
			return p[:i]
		}
	}
	return ""
}
