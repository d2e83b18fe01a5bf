package claude

import (
	"encoding/json"
	"fmt"

	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
)

// stateVersion changes when carry's meaning changes; an older state is
// rejected so that the caller re-reads the file from the start.
const stateVersion = 1

// carry is everything the parser remembers between lines. It holds ids,
// times, counters and repo-relative paths only.
type carry struct {
	V    int   `json:"v"`
	Line int64 `json:"line"` // lines seen, for error messages
	T    int64 `json:"t"`    // time of the last line that had one

	Session string `json:"sid,omitempty"`
	// IDs counts the lines of each session id, for files not named by
	// their session (see sessionID).
	IDs      map[string]int `json:"ids,omitempty"`
	Version  string         `json:"ver,omitempty"`
	LaneSent bool           `json:"lane,omitempty"`
	Meta     LaneMeta       `json:"meta,omitempty"`

	// InputT is the time of the last user or tool-result line: the input
	// the next model response answers.
	InputT int64 `json:"in,omitempty"`
	// Msgs are the most recent response ids, to know the first line of
	// each (the one that carries the latency). Lines of one response are
	// adjacent apart from tool results streamed in between.
	Msgs []string `json:"msgs,omitempty"`
	// Calls are the calls still waiting for their result, oldest first.
	Calls []pending `json:"calls,omitempty"`
	// QuietCommit is the call id of the last successful git commit whose
	// output named no commit (git commit -q): the next command that prints
	// the latest commit's sha confirms it.
	QuietCommit string `json:"qc,omitempty"`
	// Touched are the files read or edited so far ("repo\x00path" or
	// "\x00label"), for telling a Write that creates a file from one that
	// rewrites it.
	Touched map[string]bool `json:"touched,omitempty"`

	Paths json.RawMessage `json:"paths,omitempty"`
}

const (
	maxIDs   = 8
	maxMsgs  = 16
	maxCalls = 512
)

// pending is what the result of a call needs to know about the call.
type pending struct {
	ID       string `json:"id"`
	Shell    bool   `json:"sh,omitempty"`
	Subagent bool   `json:"sa,omitempty"`
	// PR is the confirmation to look for in the output of a gh/glab PR
	// command (create, merge, close, comment).
	PR string `json:"pr,omitempty"`
	// Commit is set for shell commands that may run git commit.
	Commit bool `json:"commit,omitempty"`
	// GitCommit is set for shell commands that run git commit; Head for
	// those that print the latest commit's sha.
	GitCommit bool `json:"gc,omitempty"`
	Head      bool `json:"head,omitempty"`
	// Fetch is set for web fetches, whose result reports the HTTP status.
	Fetch bool `json:"fetch,omitempty"`
}

// State implements watchers.Parser.
func (p *Parser) State() ([]byte, error) {
	ps, err := p.paths.MarshalState()
	if err != nil {
		return nil, fmt.Errorf("claude: paths state: %w", err)
	}
	st := p.st
	st.V = stateVersion
	st.Paths = ps
	return json.Marshal(st)
}

// Restore returns a parser that continues from the carry-state State
// returned. An empty state gives a fresh parser.
func Restore(src watchers.Source, state []byte) (*Parser, error) {
	p := NewParser(src)
	if len(state) == 0 {
		return p, nil
	}
	var st carry
	if err := json.Unmarshal(state, &st); err != nil {
		return nil, fmt.Errorf("claude: unreadable parser state")
	}
	if st.V != stateVersion {
		return nil, fmt.Errorf("claude: parser state version %d, want %d", st.V, stateVersion)
	}
	if len(st.Paths) > 0 && string(st.Paths) != "null" {
		paths, err := redact.RestorePaths(st.Paths)
		if err != nil {
			return nil, fmt.Errorf("claude: paths state: %w", err)
		}
		p.paths = paths
	}
	st.Paths = nil
	p.st = st
	return p, nil
}

// firstLineOf reports whether msgID is seen for the first time, and
// remembers it.
func (c *carry) firstLineOf(msgID string) bool {
	for _, m := range c.Msgs {
		if m == msgID {
			return false
		}
	}
	c.Msgs = append(c.Msgs, msgID)
	if len(c.Msgs) > maxMsgs {
		c.Msgs = append(c.Msgs[:0], c.Msgs[len(c.Msgs)-maxMsgs:]...)
	}
	return true
}

func (c *carry) addCall(pc pending) {
	c.Calls = append(c.Calls, pc)
	if len(c.Calls) > maxCalls {
		c.Calls = append(c.Calls[:0], c.Calls[len(c.Calls)-maxCalls:]...)
	}
}

// takeCall removes and returns the pending call with the given id.
func (c *carry) takeCall(id string) (pending, bool) {
	for i, pc := range c.Calls {
		if pc.ID == id {
			c.Calls = append(c.Calls[:i], c.Calls[i+1:]...)
			return pc, true
		}
	}
	return pending{}, false
}

func (c *carry) touch(key string) {
	if c.Touched == nil {
		c.Touched = map[string]bool{}
	}
	c.Touched[key] = true
}
