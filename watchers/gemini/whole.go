package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

// maxWhole bounds a whole-document chat file read into memory.
const maxWhole = 512 << 20

// wholeSession reads the sessionId of a whole-document chat file, or "".
func wholeSession(path string) string {
	f, err := watchers.OpenLog(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var h head
	if json.NewDecoder(io.LimitReader(f, maxWhole)).Decode(&h) != nil {
		return ""
	}
	return ident(h.SessionID)
}

// ErrNotChat means a JSON document is not a Gemini CLI conversation.
var ErrNotChat = errors.New("gemini: not a chat document (no sessionId and messages)")

// LooksLikeDocument reports whether a decoded JSON document head is a
// Gemini CLI conversation: a sessionId, a projectHash and a message list.
func LooksLikeDocument(b []byte) bool {
	var h head
	return json.Unmarshal(b, &h) == nil && h.SessionID != "" && h.ProjectHash != "" && len(h.Messages) > 0
}

// ParseWhole reads a whole-document chat file (the form the client wrote
// before it moved to JSONL, rewritten whole at every change) with a fresh
// parser: its messages in order, as the JSONL form gives them.
func ParseWhole(path string, src watchers.Source) ([]event.Event, error) {
	f, err := watchers.OpenLog(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxWhole+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxWhole {
		return nil, fmt.Errorf("gemini: chat document over %d MiB", maxWhole>>20)
	}
	if !LooksLikeDocument(b) {
		return nil, ErrNotChat
	}
	p := NewParser(src)
	p.SetPath(path)
	return p.Line(b, nil)
}

// IsWholeChat reports whether a .json file is a whole-document Gemini CLI
// conversation: a top-level object with sessionId and projectHash keys (a
// Codex rollout document has session and items instead).
func IsWholeChat(path string) bool {
	if filepath.Ext(path) != ".json" {
		return false
	}
	f, err := watchers.OpenLog(path)
	if err != nil {
		return false
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, maxWhole))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	var id, hash bool
	for i := 0; i < 32 && dec.More() && !(id && hash); i++ {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case "sessionId":
			id = true
		case "projectHash":
			hash = true
		case "session", "items":
			return false
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return id && hash
}

// SubagentFiles lists the subagent conversations of a main chat file:
// chats/<session id>/*.jsonl beside it.
func SubagentFiles(mainPath, session string) []string {
	if ident(session) == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(mainPath), session, "*.jsonl"))
	return files
}
