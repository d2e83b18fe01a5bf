package opencode

import "encoding/json"

// Agent is the watchers.Source agent name of OpenCode stores.
const Agent = "opencode"

// Tool is the session.agentTool of OpenCode maps.
const Tool = "opencode"

// sessionRec is a session row (or storage/session file), reduced to what
// the map needs. title and summaries are text and never read.
type sessionRec struct {
	ID      string `json:"id"`
	Parent  string `json:"parentID"`
	Dir     string `json:"directory"`
	Version string `json:"version"`
	Time    struct {
		Created int64 `json:"created"`
		Updated int64 `json:"updated"`
	} `json:"time"`
	// Tokens are the session's own totals where the store keeps them (the
	// SQLite session row): the client's accounting, which the sum of the
	// session's steps must equal.
	Tokens tokens `json:"-"`
}

// messageRec is one message with its parts in id order (part ids, like
// message ids, ascend with time).
type messageRec struct {
	ID      string
	Created int64
	Data    []byte
	Parts   [][]byte
}

// tokens is OpenCode's token record: input excludes the cached tokens,
// output excludes reasoning.
type tokens struct {
	Total     int64 `json:"total"`
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Cache     struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

func (t tokens) sum() int64 { return t.Input + t.Output + t.Reasoning + t.Cache.Read + t.Cache.Write }

// msgInfo is the allow-listed part of a message's JSON.
type msgInfo struct {
	Role string `json:"role"`
	Time struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
	} `json:"time"`
	ModelID string `json:"modelID"`
	Model   struct {
		ModelID string `json:"modelID"`
	} `json:"model"`
	Path   msgPath `json:"path"`
	Tokens *tokens `json:"tokens"`
	Finish string  `json:"finish"`
	Error  *struct {
		Name string `json:"name"`
		Data struct {
			StatusCode int    `json:"statusCode"`
			Message    string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

// msgPath is an assistant message's path: the cwd and the root of its
// project (the git worktree, "/" for a directory outside git).
type msgPath struct {
	Cwd  string `json:"cwd"`
	Root string `json:"root"`
}

// partInfo is the allow-listed part of a part's JSON. Text fields are
// decoded only to be measured.
type partInfo struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
	Mime      string `json:"mime"`
	Tool      string `json:"tool"`
	CallID    string `json:"callID"`
	State     struct {
		Status   string                     `json:"status"`
		Input    map[string]json.RawMessage `json:"input"`
		Output   string                     `json:"output"`
		Error    string                     `json:"error"`
		Metadata struct {
			Exit      *int   `json:"exit"`
			SessionID string `json:"sessionId"`
			Exists    *bool  `json:"exists"`
		} `json:"metadata"`
		Time struct {
			Start int64 `json:"start"`
			End   int64 `json:"end"`
		} `json:"time"`
	} `json:"state"`
	Tokens  *tokens `json:"tokens"`
	Auto    bool    `json:"auto"`
	Attempt int     `json:"attempt"`
	Error   *struct {
		Name string `json:"name"`
		Data struct {
			StatusCode int    `json:"statusCode"`
			Message    string `json:"message"`
		} `json:"data"`
	} `json:"error"`
	Time struct {
		Start   int64 `json:"start"`
		End     int64 `json:"end"`
		Created int64 `json:"created"`
	} `json:"time"`
}
