package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// Agent is the watchers.Source agent name of Codex files.
const Agent = "codex"

// uuidTail matches the thread id at the end of a rollout file name:
// rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl[.zst] (and the older
// rollout-YYYY-MM-DD-<uuid>.json).
var uuidTail = regexp.MustCompile(`([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$`)

// ErrNoSession means neither the first line nor the file name names a thread.
var ErrNoSession = errors.New("codex: no session id in first line or file name")

// meta is what routing needs from a first line.
type meta struct {
	id, parent string
	child      bool // a spawned subagent thread (a lane of its parent)
	forked     bool // history copied from another thread (tokens are baselined)
	subagent   bool // any source.subagent kind
}

// Identify routes a rollout. The session is the session_meta id (payload.id,
// or the newer payload.session_id), the legacy header's id, or the uuid at
// the end of the file name. A thread spawned by another thread
// (source.subagent.thread_spawn.parent_thread_id, or a top-level
// parent_thread_id next to a source.subagent) is also a lane of its parent:
// ParentSession is the parent's id and ChildLane its lane id. A fork made by
// the user (forked_from_id alone) is a session of its own, not a lane.
func Identify(path string, firstLine []byte) (watchers.Source, error) {
	src := watchers.Source{Agent: Agent}
	m := readMeta(firstLine)
	src.Session = m.id
	if src.Session == "" {
		src.Session = fileSessionID(path)
	}
	if src.Session == "" {
		return src, ErrNoSession
	}
	if m.child && m.parent != "" && m.parent != src.Session {
		src.ParentSession = m.parent
		src.ChildLane = LaneID(src.Session)
	}
	return src, nil
}

// fileSessionID returns the uuid suffix of a rollout file name.
func fileSessionID(path string) string {
	base := filepath.Base(strings.ReplaceAll(path, `\`, "/"))
	for _, ext := range []string{".zst", ".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	if m := uuidTail.FindString(base); m != "" {
		return strings.ToLower(m)
	}
	return ""
}

// LaneID is the lane id of a child thread inside its parent's map (see
// watchers.LaneID).
func LaneID(threadID string) string { return watchers.LaneID(threadID) }

// LooksLike reports whether a first line is a Codex rollout's: a wrapper
// line ({timestamp, type, payload} with a rollout item type), the legacy
// header ({id, timestamp, instructions?, git?}), or the single-JSON form
// written on one line ({session, items}).
func LooksLike(firstLine []byte) bool {
	line := bytes.TrimSpace(firstLine)
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	top, ok := walkTop(line)
	if !ok {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			// A first line cut at the reader's cap: recognise the wrapper by
			// its opening keys.
			head := line[:min(len(line), 512)]
			return bytes.Contains(head, []byte(`"type":"session_meta"`)) &&
				bytes.Contains(head, []byte(`"payload":`))
		}
		top = topOf(m)
	}
	switch {
	case top.payload:
		return rolloutTypes[top.typ]
	case top.session:
		return top.items
	}
	return top.id && top.timestamp && !top.other // the legacy header
}

// topKeys is what LooksLike reads of a first line's members: which are
// there, and the type (the last one, as a map of the members holds it).
type topKeys struct {
	payload, session, items bool
	// id and timestamp are the legacy header's keys; other is set by any
	// key but those, instructions and git.
	id, timestamp, other bool
	typ                  string
}

func (k *topKeys) add(key string, val []byte) {
	switch key {
	case "payload":
		k.payload = true
	case "session":
		k.session = true
	case "items":
		k.items = true
	case "id":
		k.id = true
	case "timestamp":
		k.timestamp = true
	case "instructions", "git":
	case "type":
		k.typ = ""
		if len(val) > 0 && val[0] == '"' {
			k.typ, _ = jsonscan.String(val)
		}
	}
	switch key {
	case "id", "timestamp", "instructions", "git":
	default:
		k.other = true
	}
}

// walkTop reads a first line's members by a walk; ok is false for a line
// the walk refuses (invalid, or keys with escapes).
func walkTop(line []byte) (k topKeys, ok bool) {
	ok = jsonscan.Object(line, func(key, val []byte) bool {
		k.add(string(key), val)
		return true
	})
	return k, ok
}

// topOf reads the members encoding/json decoded.
func topOf(m map[string]json.RawMessage) topKeys {
	var k topKeys
	for key, val := range m {
		k.add(key, val)
	}
	return k
}

// rolloutTypes are the RolloutItem variants a wrapper line can start with.
var rolloutTypes = map[string]bool{
	"session_meta": true, "response_item": true, "event_msg": true,
	"turn_context": true, "compacted": true, "world_state": true,
}

// readMeta reads the routing facts of a first line; a line that is not a
// session_meta or legacy header yields a zero meta. A first line cut at the
// reader's cap is read up to the cut.
func readMeta(firstLine []byte) meta {
	var l rawLine
	if !scanLine(&l, firstLine) {
		l = rawLine{}
		if err := json.Unmarshal(firstLine, &l); err != nil && !isTypeError(err) {
			return cutMeta(firstLine)
		}
	}
	switch {
	case l.Type == "session_meta" && l.Payload != nil:
		return metaOf(l.Payload)
	case l.Session != nil:
		return meta{id: l.Session.ID}
	case l.Type == "" && l.Payload == nil && l.RecordType == "":
		return meta{id: l.ID}
	}
	return meta{}
}

// metaOf reads the routing facts of a session_meta payload.
func metaOf(p *item) meta {
	m := meta{id: p.ID, parent: p.ParentThread, forked: p.ForkedFromID != ""}
	if m.id == "" {
		m.id = p.SessionID
	}
	var src sourceInfo
	if len(p.Source) > 0 && p.Source[0] == '{' && json.Unmarshal(p.Source, &src) == nil && len(src.Subagent) > 0 && string(src.Subagent) != "null" {
		m.subagent = true
		var sa subagentInfo
		if src.Subagent[0] == '{' && json.Unmarshal(src.Subagent, &sa) == nil && sa.ThreadSpawn != nil {
			m.child = true
			if sa.ThreadSpawn.ParentThreadID != "" {
				m.parent = sa.ThreadSpawn.ParentThreadID
			}
		}
	}
	if m.subagent && m.parent != "" {
		m.child = true
	}
	return m
}

// cutMeta walks the tokens of a session_meta line that ends early (its
// instructions can be megabytes), keeping the routing keys read before the
// cut: id, session_id, parent_thread_id, forked_from_id and source.
func cutMeta(line []byte) meta {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return meta{}
	}
	var p item
	wrapper := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			break
		}
		if key == "type" {
			var typ string
			if dec.Decode(&typ) != nil || typ != "session_meta" {
				return meta{}
			}
			wrapper = true
			continue
		}
		if key != "payload" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				break
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			break
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				break
			}
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				break
			}
			switch k {
			case "id":
				_ = json.Unmarshal(v, &p.ID)
			case "session_id":
				_ = json.Unmarshal(v, &p.SessionID)
			case "parent_thread_id":
				_ = json.Unmarshal(v, &p.ParentThread)
			case "forked_from_id":
				_ = json.Unmarshal(v, &p.ForkedFromID)
			case "source":
				p.Source = v
			}
		}
		break
	}
	if !wrapper {
		return meta{}
	}
	return metaOf(&p)
}

// uuidV7Time returns the Unix ms time at the head of a version 7 uuid
// (thread and turn ids of newer builds are v7).
func uuidV7Time(id string) (int64, bool) {
	if len(id) != 36 || !uuidAny.MatchString(id) || id[14] != '7' {
		return 0, false
	}
	var ms int64
	for _, c := range id[:8] + id[9:13] {
		ms = ms<<4 | int64(hexVal(byte(c)))
	}
	return ms, true
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
