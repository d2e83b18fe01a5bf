package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// Agent is the watchers.Source agent name of Claude Code files.
const Agent = "claude"

// Identify routes a transcript from its path and first line:
//
//   - <proj>/<uuid>.jsonl: the session uuid (a non-uuid stem: the
//     sessionId of the first line, else the stem itself);
//   - <proj>/<sid>/subagents/[…/]agent-<id>.jsonl: session sid, lane sa-<id>;
//   - <proj>/agent-<id>.jsonl and any other file whose first line is a
//     sidechain line with an agentId (the flat layout of older versions,
//     archived copies): the line's sessionId, lane sa-<agentId>;
//   - agent-acompact-*: the compaction's own request, no lane; the parser
//     yields that request only, as a side request of the main lane.
//
// line is the file's first line.
func Identify(path string, line []byte) (watchers.Source, error) {
	src := watchers.Source{Agent: Agent}
	base := filepath.Base(filepath.ToSlash(path))
	base = base[strings.LastIndexByte(base, '/')+1:]
	stem := strings.TrimSuffix(base, ".jsonl")

	var head headLine
	if len(line) > 0 && !headFields.Fill(&head, line) {
		// A first line that is not an object leaves routing to the path.
		head = headLine{}
		_ = json.Unmarshal(line, &head)
	}
	lineSession := ident(head.SessionID)

	agentID, isAgentFile := strings.CutPrefix(stem, "agent-")
	if !isAgentFile {
		if i := strings.LastIndex(stem, "__agent-"); i >= 0 {
			agentID, isAgentFile = stem[i+len("__agent-"):], true
		}
	}
	isAgentFile = isAgentFile && agentIDRE.MatchString(agentID)
	if a := ident(str(head.AgentID)); boolean(head.IsSidechain) && a != "" {
		agentID, isAgentFile = a, true
	}
	agentID = ident(agentID)

	if isAgentFile && agentID != "" {
		src.Session = subagentParent(path)
		if src.Session == "" {
			src.Session = lineSession
		}
		if src.Session == "" {
			return src, fmt.Errorf("claude: subagent file without a session id")
		}
		if !strings.HasPrefix(agentID, "acompact") {
			src.Lane = "sa-" + agentID
		}
		return src, nil
	}
	if inSubagentsDir(path) {
		// Workflow journals and other sidecars beside subagent files.
		return src, fmt.Errorf("claude: not a transcript")
	}
	switch {
	case uuidRE.MatchString(stem):
		src.Session = stem
	case len(stem) > 36 && stem[len(stem)-37] == '_' && uuidRE.MatchString(stem[len(stem)-36:]):
		// Archived copies keep the session file name after a prefix.
		src.Session = stem[len(stem)-36:]
	case lineSession != "":
		src.Session = lineSession
	case ident(stem) != "":
		// No id in the first line (a snapshot or title line): the file's
		// own name routes it; the session record carries the real id.
		src.Session = ident(stem)
	default:
		return src, fmt.Errorf("claude: no session id in file name or first line")
	}
	return src, nil
}

// headLine is what routing reads of a file's first line.
type headLine struct {
	SessionID   string          `json:"sessionId"`
	IsSidechain json.RawMessage `json:"isSidechain"`
	AgentID     json.RawMessage `json:"agentId"`
}

var headFields = jsonscan.NewFields(
	jsonscan.Field[headLine]{Name: "sessionId", Set: jsonscan.Text(func(h *headLine) *string { return &h.SessionID })},
	jsonscan.Field[headLine]{Name: "isSidechain", Set: jsonscan.Raw(func(h *headLine) *json.RawMessage { return &h.IsSidechain })},
	jsonscan.Field[headLine]{Name: "agentId", Set: jsonscan.Raw(func(h *headLine) *json.RawMessage { return &h.AgentID })},
)

// agentIDRE is the shape of a subagent id in a file name ("a2898e3",
// "a396f02b61f8d3bbf", "acompact-946d2b").
var agentIDRE = regexp.MustCompile(`^[A-Za-z0-9]+(-[A-Za-z0-9]+)?$`)

func inSubagentsDir(path string) bool {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for _, p := range parts[:len(parts)-1] {
		if p == "subagents" {
			return true
		}
	}
	return false
}

// subagentParent returns <sid> for …/<sid>/subagents/…/agent-x.jsonl.
func subagentParent(path string) string {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := len(parts) - 2; i > 0; i-- {
		if parts[i] == "subagents" && uuidRE.MatchString(parts[i-1]) {
			return parts[i-1]
		}
	}
	return ""
}

// LooksLike reports whether a first line is a Claude Code transcript line:
// a JSON object whose type is one of Claude's record types, without the
// payload envelope of Codex rollouts.
func LooksLike(firstLine []byte) bool {
	var head recordHead
	if !recordHeadFields.Fill(&head, firstLine) {
		// What the walk does not mirror (a repeated or case-folded key)
		// is decided by encoding/json as before: a type that is not a
		// string, even one a later duplicate replaces, refuses the line.
		var typed struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(firstLine, &typed) != nil || typed.Payload != nil {
			return false
		}
		return knownType(typed.Type)
	}
	if head.Payload != nil {
		return false
	}
	switch t := bytes.TrimSpace(head.Type); {
	case len(t) == 0 || t[0] == 'n':
		return knownType("")
	case t[0] != '"':
		return false // encoding/json refuses the line: a type error
	default:
		s, _ := words.String(t)
		return knownType(s)
	}
}

// recordHead is what LooksLike reads of a first line.
type recordHead struct {
	Type    json.RawMessage `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

var recordHeadFields = jsonscan.NewFields(
	jsonscan.Field[recordHead]{Name: "type", Set: jsonscan.Raw(func(h *recordHead) *json.RawMessage { return &h.Type })},
	jsonscan.Field[recordHead]{Name: "payload", Set: jsonscan.Raw(func(h *recordHead) *json.RawMessage { return &h.Payload })},
)

// LaneMeta is what a subagent's sidecar meta.json says about its lane.
type LaneMeta struct {
	SubagentType string `json:"type,omitempty"`
	LaunchCallID string `json:"launch,omitempty"`
	Model        string `json:"model,omitempty"`
}

// maxMeta bounds the read of a sidecar: they are a few hundred bytes.
const maxMeta = 1 << 20

// ReadLaneMeta reads agent-<id>.meta.json beside a subagent file (path is
// the .jsonl file or the .meta.json itself). Only the agent type, model and
// launching tool call id are decoded; the description is text and skipped.
func ReadLaneMeta(path string) (LaneMeta, bool) {
	metaPath := path
	if !strings.HasSuffix(path, ".meta.json") {
		metaPath = strings.TrimSuffix(path, ".jsonl") + ".meta.json"
	}
	f, err := watchers.OpenLog(metaPath)
	if err != nil {
		return LaneMeta{}, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMeta))
	if err != nil && !errors.Is(err, io.EOF) {
		return LaneMeta{}, false
	}
	var m struct {
		AgentType json.RawMessage `json:"agentType"`
		ToolUseID json.RawMessage `json:"toolUseId"`
		Model     json.RawMessage `json:"model"`
	}
	if decode(data, &m) != nil {
		return LaneMeta{}, false
	}
	lm := LaneMeta{SubagentType: ident(str(m.AgentType)), LaunchCallID: ident(str(m.ToolUseID)), Model: ident(str(m.Model))}
	return lm, lm.SubagentType != "" || lm.LaunchCallID != ""
}

// ReadMeta returns the subagent type from the meta.json beside a subagent
// file.
func ReadMeta(path string) (subagentType string, ok bool) {
	m, ok := ReadLaneMeta(path)
	if !ok || m.SubagentType == "" {
		return "", false
	}
	return m.SubagentType, true
}
