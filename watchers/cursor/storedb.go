package cursor

import (
	"context"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
)

// ReadStoreDB reads a cursor-agent chat store
// (~/.cursor/chats/<md5(cwd)>/<chatId>/store.db), read-only. It returns one
// conversation (none when the meta row is missing):
//
//   - meta row "0" (hex-encoded JSON): agentId is the native id, createdAt
//     the start, lastUsedModel the model of every response (the store keeps
//     no per-message model, time or usage);
//   - blobs: JSON messages ({"role","content":[…]}) in the order the root
//     blob (protobuf, field 1 = child blob ids) lists them, else in row
//     order; the root's field 9, the workspace path, is the cwd.
//
// No message has a time: events have T = 0 and the session is bounded by
// createdAt and the database's modification time (with its -wal).
func ReadStoreDB(ctx context.Context, path string) ([]Conversation, error) {
	db, err := openRO(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	raw, err := getKey(ctx, db, "meta", "0")
	if err != nil {
		return nil, err
	}
	meta, ok := decodeMeta(raw)
	if !ok {
		return nil, nil
	}
	if meta.AgentID == "" {
		meta.AgentID = filepath.Base(filepath.Dir(path))
	}
	msgs, root, err := readBlobs(ctx, db, meta.LatestRootBlobID)
	if err != nil {
		return nil, err
	}
	conv := storeConvo{meta: meta, root: root, msgs: msgs, endMs: modTime(path)}
	return []Conversation{conv.build()}, nil
}

// IsStoreDB reports whether path is a cursor-agent store.db: an SQLite file
// with the tables meta and blobs.
func IsStoreDB(path string) bool {
	return hasTables(path, "meta", "blobs")
}

// storeMeta is the decoded meta row. name (a title) is text and not read.
type storeMeta struct {
	AgentID          string  `json:"agentId"`
	LatestRootBlobID string  `json:"latestRootBlobId"`
	CreatedAt        float64 `json:"createdAt"`
	LastUsedModel    string  `json:"lastUsedModel"`
}

// decodeMeta accepts the hex-encoded JSON of the meta row, or plain JSON.
func decodeMeta(raw []byte) (storeMeta, bool) {
	var m storeMeta
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return m, false
	}
	if raw[0] != '{' {
		dec := make([]byte, hex.DecodedLen(len(raw)))
		n, err := hex.Decode(dec, raw)
		if err != nil {
			return m, false
		}
		raw = dec[:n]
	}
	if decodeRow(raw, &m) != nil {
		return m, false
	}
	return m, true
}

// storeMsg is a message blob reduced at decoding to what the events need:
// the shape of a prompt, of a response and its calls, or of tool results.
type storeMsg struct {
	id      string // blob id
	role    string
	user    event.User
	llm     event.LLM
	specs   []callSpec
	results []event.Result
}

// storeRoot is what the root blob says.
type storeRoot struct {
	children  []string // child blob ids, hex
	workspace string
}

// readBlobs reads the JSON message blobs and the root blob. Blobs that are
// neither are skipped (other protobuf nodes).
func readBlobs(ctx context.Context, db *sql.DB, rootID string) ([]storeMsg, storeRoot, error) {
	var root storeRoot
	rows, err := db.QueryContext(ctx, "SELECT id, data FROM blobs ORDER BY rowid")
	if err != nil {
		return nil, root, wrapDB("read blobs", err)
	}
	defer rows.Close()
	var msgs []storeMsg
	for rows.Next() {
		var id sql.NullString
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			return nil, root, wrapDB("read blobs", err)
		}
		if id.String == rootID && rootID != "" {
			root = decodeRoot(data)
			continue
		}
		if m, ok := decodeStoreMessage(data); ok {
			m.id = id.String
			msgs = append(msgs, m)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, root, wrapDB("read blobs", err)
	}
	return msgs, root, nil
}

// decodeStoreMessage decodes a JSON message blob ({"role","content"}).
func decodeStoreMessage(data []byte) (storeMsg, bool) {
	var m storeMsg
	data = trimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return m, false
	}
	var l struct {
		Role    string  `json:"role"`
		ID      string  `json:"id"`
		Content []block `json:"content"`
	}
	var text []block
	if decodeMessage(data, &l, "content", &text) != nil || l.Role == "" {
		return m, false
	}
	blocks := l.Content
	if text != nil {
		blocks = text
	}
	m.role = l.Role
	m.llm = event.LLM{MsgID: l.ID, LatencyMs: -1}
	for _, b := range blocks {
		switch b.Type {
		case "text", "input_text", "output_text":
			if l.Role == "user" {
				c, urls := promptShape(b.Text)
				m.user.Chars += c
				m.user.URLs += urls
			} else {
				m.llm.TextChars += utf8.RuneCountInString(b.Text)
			}
		case "image", "image_url", "input_image":
			m.user.Images++
		case "reasoning", "thinking", "redacted_thinking", "redacted-reasoning":
			m.llm.Thinking = true
		case "tool-call", "tool_use", "tool_call":
			m.specs = append(m.specs, toolUseSpec(b))
		case "tool-result", "tool_result":
			if r, ok := storeResult(b); ok {
				m.results = append(m.results, r)
			}
		}
	}
	m.llm.ToolCalls = len(m.specs)
	return m, true
}

// storeResult reads a tool-result block: output length and the error flag;
// the output itself is only measured (and classified when it failed).
func storeResult(b block) (event.Result, bool) {
	id := b.ToolCallID
	if id == "" {
		id = b.ToolUseID
	}
	if id == "" {
		return event.Result{}, false
	}
	r := event.Result{CallID: id, OutBytes: rawLen(b.Result)}
	if r.OutBytes == 0 {
		r.OutBytes = rawLen(b.Content)
	}
	if b.IsError || b.IsErrorSnake {
		r.Err = true
		r.ErrClass = redact.ErrorClass(rawText(b.Result) + rawText(b.Content))
		if r.ErrClass == "" {
			r.ErrClass = "other"
		}
	}
	return r, true
}

// decodeRoot walks the root blob's protobuf fields: 1 (repeated, 32 bytes)
// child ids, 9 the workspace path. Malformed input stops the walk.
func decodeRoot(data []byte) storeRoot {
	var r storeRoot
	for len(data) > 0 {
		key, n := uvarint(data)
		if n <= 0 {
			return r
		}
		data = data[n:]
		field, wire := key>>3, key&7
		switch wire {
		case 0:
			_, n = uvarint(data)
			if n <= 0 {
				return r
			}
			data = data[n:]
		case 1:
			if len(data) < 8 {
				return r
			}
			data = data[8:]
		case 5:
			if len(data) < 4 {
				return r
			}
			data = data[4:]
		case 2:
			l, n := uvarint(data)
			if n <= 0 || l > uint64(len(data)-n) {
				return r
			}
			v := data[n : n+int(l)]
			data = data[n+int(l):]
			switch {
			case field == 1 && len(v) == 32:
				r.children = append(r.children, hex.EncodeToString(v))
			case field == 9 && utf8.Valid(v) && r.workspace == "":
				r.workspace = string(v)
			}
		default:
			return r
		}
	}
	return r
}

func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i := 0; i < len(b) && i < 10; i++ {
		x |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}

// modTime is the later modification time of a database and its -wal, in
// Unix ms.
func modTime(path string) int64 {
	var ms int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			if t := fi.ModTime().UnixMilli(); t > ms {
				ms = t
			}
		}
	}
	return ms
}

// storeConvo is a cursor-agent chat before it becomes events.
type storeConvo struct {
	meta  storeMeta
	root  storeRoot
	msgs  []storeMsg
	endMs int64
}

// ordered returns the messages in the root's order when the root lists
// them, else in row order.
func (sc storeConvo) ordered() []storeMsg {
	if len(sc.root.children) == 0 {
		return sc.msgs
	}
	byID := make(map[string]storeMsg, len(sc.msgs))
	for _, m := range sc.msgs {
		byID[m.id] = m
	}
	var out []storeMsg
	for _, id := range sc.root.children {
		if m, ok := byID[id]; ok {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return sc.msgs
	}
	return out
}

// build turns a chat into events: user messages with text or images are
// prompts; each assistant message is one response (KindLLM) followed by
// its tool calls; tool messages' tool-result blocks complete them.
func (sc storeConvo) build() Conversation {
	start := epochMs(sc.meta.CreatedAt)
	paths := redact.NewPaths()
	if sc.root.workspace != "" {
		paths.SetCWD(sc.root.workspace)
	}
	out := []event.Event{{Kind: event.KindSession, Session: &event.Session{
		NativeID: sc.meta.AgentID, AgentTool: AgentTool, Role: "root", StartT: start, EndT: sc.endMs}}}
	out = appendRepos(paths, 0, "", out)
	model := servedModel(sc.meta.LastUsedModel)
	if model != "" {
		out = append(out, event.Event{Kind: event.KindModel, Model: model})
	}
	for _, m := range sc.ordered() {
		switch m.role {
		case "user":
			if u := m.user; u.Chars > 0 || u.Images > 0 {
				out = append(out, event.Event{Kind: event.KindUser, User: &u})
			}
		case "assistant":
			llm := m.llm
			out = append(out, event.Event{Kind: event.KindLLM, Model: model, LLM: &llm})
			for _, s := range m.specs {
				var c event.Call
				c, out = buildCall(s, paths, 0, "", out)
				out = append(out, event.Event{Kind: event.KindCall, Call: &c})
			}
		}
		// Tool results come in tool messages (and, in some shapes, in
		// user messages).
		for _, r := range m.results {
			r := r
			out = append(out, event.Event{Kind: event.KindResult, Result: &r})
		}
	}
	upd := sc.endMs
	if upd == 0 {
		upd = start
	}
	return Conversation{NativeID: sc.meta.AgentID, Events: out, UpdatedMs: upd}
}
