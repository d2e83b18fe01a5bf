package opencode

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	sqlite "modernc.org/sqlite"

	"github.com/agentmap/agentmap/watchers"
)

// ErrBusy wraps the errors of a database locked by OpenCode or caught
// half-written: the caller retries later.
var ErrBusy = errors.New("database busy or changing, retry later")

// ReadDB reads an OpenCode store (opencode.db, SQLite, written by OpenCode
// 1.x) read-only and returns one conversation per root session.
func ReadDB(ctx context.Context, path string) ([]watchers.Conversation, error) {
	db, err := openRO(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	cols, err := columns(ctx, db, "session")
	if err != nil {
		return nil, err
	}
	tok := "0, 0, 0, 0, 0"
	if cols["tokens_input"] && cols["tokens_cache_write"] {
		tok = "tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write"
	}
	rows, err := db.QueryContext(ctx, "SELECT id, coalesce(parent_id, ''), directory, version, time_created, time_updated, "+tok+" FROM session")
	if err != nil {
		return nil, wrapDB("read sessions", err)
	}
	var sessions []*sessionRec
	for rows.Next() {
		s := &sessionRec{}
		var dir, ver sql.NullString
		if err := rows.Scan(&s.ID, &s.Parent, &dir, &ver, &s.Time.Created, &s.Time.Updated,
			&s.Tokens.Input, &s.Tokens.Output, &s.Tokens.Reasoning, &s.Tokens.Cache.Read, &s.Tokens.Cache.Write); err != nil {
			rows.Close()
			return nil, wrapDB("read sessions", err)
		}
		s.Dir, s.Version = dir.String, ver.String
		sessions = append(sessions, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrapDB("read sessions", err)
	}
	msgs := map[string][]messageRec{}
	index := map[string]*messageRec{}
	rows, err = db.QueryContext(ctx, "SELECT id, session_id, time_created, data FROM message ORDER BY session_id, time_created, id")
	if err != nil {
		return nil, wrapDB("read messages", err)
	}
	for rows.Next() {
		var m messageRec
		var sess string
		if err := rows.Scan(&m.ID, &sess, &m.Created, &m.Data); err != nil {
			rows.Close()
			return nil, wrapDB("read messages", err)
		}
		msgs[sess] = append(msgs[sess], m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrapDB("read messages", err)
	}
	for sess := range msgs {
		for i := range msgs[sess] {
			index[msgs[sess][i].ID] = &msgs[sess][i]
		}
	}
	rows, err = db.QueryContext(ctx, "SELECT message_id, data FROM part ORDER BY message_id, id")
	if err != nil {
		return nil, wrapDB("read parts", err)
	}
	for rows.Next() {
		var id string
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			rows.Close()
			return nil, wrapDB("read parts", err)
		}
		if m := index[id]; m != nil {
			m.Parts = append(m.Parts, data)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrapDB("read parts", err)
	}
	return convert(sessions, msgs), nil
}

// SessionTokens returns each session's own token totals as OpenCode keeps
// them in the session row (input, output, reasoning, cache read and write
// added up): the client's accounting, which tests hold the maps to.
func SessionTokens(ctx context.Context, path string) (map[string]int64, error) {
	db, err := openRO(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT id, tokens_input + tokens_output + tokens_reasoning + tokens_cache_read + tokens_cache_write FROM session")
	if err != nil {
		return nil, wrapDB("read sessions", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, wrapDB("read sessions", err)
		}
		out[id] = n
	}
	return out, wrapDB("read sessions", rows.Err())
}

// IsDB reports whether path is an OpenCode store: an SQLite file with the
// tables session, message and part. The 16-byte header is checked first so
// that no other file is handed to SQLite.
func IsDB(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	hdr := make([]byte, 16)
	_, err = f.Read(hdr)
	f.Close()
	if err != nil || string(hdr) != "SQLite format 3\x00" {
		return false
	}
	ctx := context.Background()
	db, err := openRO(ctx, path)
	if err != nil {
		return false
	}
	defer db.Close()
	for _, t := range []string{"session", "message", "part"} {
		cols, err := columns(ctx, db, t)
		if err != nil || len(cols) == 0 {
			return false
		}
	}
	return true
}

// openRO opens a live store read-only: not immutable (OpenCode writes it),
// reads wait at most the busy timeout for the writer, and query_only
// forbids any write from this connection.
func openRO(ctx context.Context, path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("opencode: open database: %w", err)
	}
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	db, err := sql.Open("sqlite", "file:"+esc+"?mode=ro&_pragma=busy_timeout(2000)&_pragma=query_only(1)")
	if err != nil {
		return nil, wrapDB("open database", err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, wrapDB("open database", err)
	}
	return db, nil
}

// columns returns the column names of a table (none when it is missing).
func columns(ctx context.Context, db *sql.DB, table string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, wrapDB("read schema", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, wrapDB("read schema", err)
		}
		out[n] = true
	}
	return out, wrapDB("read schema", rows.Err())
}

// wrapDB prefixes an SQLite error with what was being done and marks the
// transient ones with ErrBusy. SQLite's messages name the condition, never
// row content.
func wrapDB(what string, err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case 5, 6, 11, 15, 26: // busy, locked, corrupt, protocol, not a database
			return fmt.Errorf("opencode: %s: %w (%v)", what, ErrBusy, err)
		}
	}
	return fmt.Errorf("opencode: %s: %w", what, err)
}
