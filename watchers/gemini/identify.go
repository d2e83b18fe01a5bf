package gemini

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmap/agentmap/watchers"
)

// Agent is the watchers.Source agent name of Gemini CLI files.
const Agent = "gemini"

// Tool is the session.agentTool of Gemini CLI maps.
const Tool = "gemini-cli"

// ErrNoSession means a file names no session: its first record has no
// sessionId.
var ErrNoSession = errors.New("gemini: no session id in the first record")

// ErrSuperseded means a whole-document chat has a JSONL twin beside it: a
// current client that resumed it wrote the whole conversation again as
// <name>.jsonl, which is read instead.
var ErrSuperseded = errors.New("gemini: a .jsonl copy of this chat is beside it and is read instead")

// head is what routing needs from a first record (the session metadata of
// a JSONL file, or the opening of a whole-document file).
type head struct {
	SessionID   string          `json:"sessionId"`
	ProjectHash string          `json:"projectHash"`
	Kind        string          `json:"kind"`
	StartTime   string          `json:"startTime"`
	Messages    json.RawMessage `json:"messages"`
}

// LooksLike recognises a Gemini CLI chat file from its first line: a JSON
// object with both sessionId and projectHash (Claude's records carry a
// sessionId but never a projectHash). A whole-document file written with
// indentation starts with a lone "{"; it is recognised by its path (Form).
func LooksLike(firstLine []byte) bool {
	var h head
	if json.Unmarshal(firstLine, &h) != nil {
		return false
	}
	return h.SessionID != "" && h.ProjectHash != ""
}

// Identify routes a chat file:
//
//   - tmp/<project>/chats/session-<time>-<short id>.jsonl (and the older
//     .json whole documents): the sessionId of its metadata;
//   - tmp/<project>/chats/<parent session id>/<agent id>.jsonl: a subagent's
//     conversation, lane sa-<agent id> of the parent session.
//
// A whole-document file's first line is "{": its session id is read from
// the document (wholeSession).
func Identify(path string, firstLine []byte) (watchers.Source, error) {
	src := watchers.Source{Agent: Agent}
	var h head
	_ = json.Unmarshal(firstLine, &h)
	id := ident(h.SessionID)
	if strings.HasSuffix(path, ".json") {
		if _, err := os.Stat(path + "l"); err == nil {
			return src, ErrSuperseded
		}
		if id == "" {
			id = wholeSession(path)
		}
	}
	slash := filepath.ToSlash(path)
	dir := filepath.Base(filepath.Dir(slash))
	stem := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(slash), ".jsonl"), ".json")
	if dir != "chats" && filepath.Base(filepath.Dir(filepath.Dir(slash))) == "chats" {
		parent := ident(dir)
		agent := id
		if agent == "" {
			agent = ident(stem)
		}
		if parent == "" || agent == "" {
			return src, ErrNoSession
		}
		src.Session, src.Lane = parent, LaneID(agent)
		return src, nil
	}
	if id == "" {
		return src, ErrNoSession
	}
	src.Session = id
	return src, nil
}

// LaneID is the lane id of a subagent inside its parent's map (see
// toolkit.LaneID): its agent id is a random uuid.
func LaneID(agentID string) string { return watchers.LaneID(agentID) }

func ident(s string) string { return watchers.Ident(s) }
