// Package storagetest lays a store the real OpenCode wrote (opencode.db)
// out as the JSON storage of the versions before the store, for the tests
// of the storage reader and of the daemon that follows it. No client of
// those versions is run: the files are written by the tests, in the layout
// the current client's storage migration reads (see package opencode).
package storagetest

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"

	"github.com/agentmap/agentmap/watchers/sqlitero"
)

// Write is one file write of the JSON storage: the file's slash-separated
// path under the data directory, its content (pretty-printed, as OpenCode
// writes it) and when it was made (Unix ms).
type Write struct {
	Path string
	Data []byte
	At   int64
	// Session is the id of the session whose file this is, for a session
	// file; "" for a message or part.
	Session string
}

// Writes returns the writes that lay the store at db out: every message
// and part file once when it was created and again when it was last
// updated, every session file once when it was created (each with its
// final content), in time order, a session before its messages and a
// message before its parts at the same instant. The last write of a path
// is its final content.
func Writes(ctx context.Context, db string) ([]Write, error) {
	conn, err := sqlitero.Open(ctx, db)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var out []Write
	add := func(p string, v any, created, updated int64, session string) {
		b, _ := json.MarshalIndent(v, "", "  ")
		out = append(out, Write{Path: p, Data: b, At: created, Session: session})
		if updated > created {
			out = append(out, Write{Path: p, Data: b, At: updated, Session: session})
		}
	}
	rows, err := conn.QueryContext(ctx, "SELECT id, project_id, coalesce(parent_id, ''), directory, version, title, time_created, time_updated FROM session")
	if err != nil {
		return nil, fmt.Errorf("storagetest: sessions: %w", err)
	}
	for rows.Next() {
		var id, project, parent, dir, version, title string
		var created, updated int64
		if err := rows.Scan(&id, &project, &parent, &dir, &version, &title, &created, &updated); err != nil {
			rows.Close()
			return nil, err
		}
		s := map[string]any{"id": id, "projectID": project, "directory": dir, "version": version, "title": title,
			"time": map[string]any{"created": created, "updated": updated}}
		if parent != "" {
			s["parentID"] = parent
		}
		// Once, when created: OpenCode writes messages without touching
		// the session file, so a follower must see a session grow from
		// its messages alone.
		add(path.Join("storage", "session", project, id+".json"), s, created, created, id)
	}
	rows.Close()
	for _, q := range []struct{ sel, kind string }{
		{"SELECT id, session_id, '', data, time_created, time_updated FROM message", "message"},
		{"SELECT id, message_id, session_id, data, time_created, time_updated FROM part", "part"},
	} {
		rows, err := conn.QueryContext(ctx, q.sel)
		if err != nil {
			return nil, fmt.Errorf("storagetest: %ss: %w", q.kind, err)
		}
		for rows.Next() {
			var id, owner, session, data string
			var created, updated int64
			if err := rows.Scan(&id, &owner, &session, &data, &created, &updated); err != nil {
				rows.Close()
				return nil, err
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(data), &v); err != nil {
				rows.Close()
				return nil, fmt.Errorf("storagetest: %s %s: %w", q.kind, id, err)
			}
			v["id"] = id
			if q.kind == "message" {
				v["sessionID"] = owner
			} else {
				v["messageID"], v["sessionID"] = owner, session
			}
			add(path.Join("storage", q.kind, owner, id+".json"), v, created, updated, "")
		}
		rows.Close()
	}
	// Sessions, then messages, then parts at the same instant: each
	// before what belongs to it.
	rank := func(w Write) int {
		switch path.Base(path.Dir(path.Dir(w.Path))) {
		case "session":
			return 0
		case "message":
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].At != out[j].At {
			return out[i].At < out[j].At
		}
		return rank(out[i]) < rank(out[j])
	})
	return out, nil
}
