package opencode

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/sqlitero"
)

// ErrBusy wraps the errors of a database locked by OpenCode or caught
// half-written: the caller retries later.
var ErrBusy = errors.New("database busy or changing, retry later")

// ReadDB reads an OpenCode store (opencode.db, SQLite, written by OpenCode
// 1.x) read-only and returns one conversation per root session.
//
// OpenCode writes its store all the time while it works, and the store
// holds every session the user ever had: a poll must not decode all of
// them each time. Within one read transaction (a consistent snapshot),
// ReadDB reads the session rows and, per session, the number and latest
// update time of its messages and parts; a root session whose family
// (itself and the sessions below it) shows the same figures as at the
// previous read of the same file is answered from memory, the others are
// read and converted again. OpenCode rewrites a message or part with a new
// time_updated (seen in 1.18.33's stores), so the result is the same as a
// read from scratch.
func ReadDB(ctx context.Context, path string) ([]watchers.Conversation, error) {
	db, err := openRO(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, wrapDB("begin read", err)
	}
	defer tx.Rollback()
	sessions, err := readSessions(ctx, tx)
	if err != nil {
		return nil, err
	}
	stamps, err := readStamps(ctx, tx)
	if err != nil {
		return nil, err
	}
	roots, children := tree(sessions)
	cache := caches.get(path)
	keys := make(map[string]string, len(roots))
	var stale []string
	for _, r := range roots {
		var k strings.Builder
		for _, s := range family(r, children) {
			fmt.Fprintf(&k, "%s/%d/%d/%s;", s.ID, s.Time.Updated, s.Time.Created, stamps[s.ID])
			if s != r {
				fmt.Fprintf(&k, "p=%s;", s.Parent)
			}
		}
		keys[r.ID] = k.String()
		if c, ok := cache.convs[r.ID]; !ok || c.key != keys[r.ID] {
			for _, s := range family(r, children) {
				stale = append(stale, s.ID)
			}
		}
	}
	msgs, err := readMessages(ctx, tx, stale)
	if err != nil {
		return nil, err
	}
	next := make(map[string]cached, len(roots))
	out := make([]watchers.Conversation, 0, len(roots))
	for _, r := range roots {
		c, ok := cache.convs[r.ID]
		if !ok || c.key != keys[r.ID] {
			c = cached{key: keys[r.ID], conv: convertRoot(r, msgs, children)}
		}
		next[r.ID] = c
		out = append(out, c.conv)
	}
	caches.put(path, next)
	return out, nil
}

// cached is a conversation with the figures it was read at.
type cached struct {
	key  string
	conv watchers.Conversation
}

// dbCache holds, per store file, the conversations of its last read. A
// conversation's events are shared with the caller: callers never change
// them.
type dbCache struct {
	mu    sync.Mutex
	files map[string]map[string]cached
}

var caches = &dbCache{files: map[string]map[string]cached{}}

type fileCache struct{ convs map[string]cached }

func (c *dbCache) get(path string) fileCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fileCache{convs: c.files[path]}
}

func (c *dbCache) put(path string, convs map[string]cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.files[path] = convs
}

// readSessions reads the session rows.
func readSessions(ctx context.Context, tx *sql.Tx) ([]*sessionRec, error) {
	cols, err := columns(ctx, tx, "session")
	if err != nil {
		return nil, err
	}
	tok := "0, 0, 0, 0, 0"
	if cols["tokens_input"] && cols["tokens_cache_write"] {
		tok = strings.Join([]string{num("tokens_input"), num("tokens_output"), num("tokens_reasoning"), num("tokens_cache_read"), num("tokens_cache_write")}, ", ")
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+txt("id")+", "+txt("parent_id")+", "+txt("directory")+", "+txt("version")+", "+
		num("time_created")+", "+num("time_updated")+", "+tok+" FROM session")
	if err != nil {
		return nil, wrapDB("read sessions", err)
	}
	defer rows.Close()
	var sessions []*sessionRec
	for rows.Next() {
		s := &sessionRec{}
		if err := rows.Scan(&s.ID, &s.Parent, &s.Dir, &s.Version, &s.Time.Created, &s.Time.Updated,
			&s.Tokens.Input, &s.Tokens.Output, &s.Tokens.Reasoning, &s.Tokens.Cache.Read, &s.Tokens.Cache.Write); err != nil {
			return nil, scanFailed("read sessions", err)
		}
		sessions = append(sessions, s)
	}
	return sessions, wrapDB("read sessions", rows.Err())
}

// readStamps returns, per session, the number and latest update of its
// messages and of its parts.
func readStamps(ctx context.Context, tx *sql.Tx) (map[string]string, error) {
	out := map[string]string{}
	for _, table := range []string{"message", "part"} {
		// Grouped by the column itself, which its index orders (by the
		// cast, every poll sorted the whole table); the group's value is
		// read as text.
		rows, err := tx.QueryContext(ctx, "SELECT "+txt("session_id")+", count(*), coalesce(max("+num("time_updated")+"), 0) FROM "+table+" GROUP BY session_id")
		if err != nil {
			return nil, wrapDB("read "+table+"s", err)
		}
		for rows.Next() {
			var id string
			var n, t int64
			if err := rows.Scan(&id, &n, &t); err != nil {
				rows.Close()
				return nil, scanFailed("read "+table+"s", err)
			}
			out[id] += fmt.Sprintf("%s:%d:%d,", table, n, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, wrapDB("read "+table+"s", err)
		}
	}
	return out, nil
}

// readMessages reads the messages of the given sessions with their parts.
func readMessages(ctx context.Context, tx *sql.Tx, sessions []string) (map[string][]messageRec, error) {
	msgs := map[string][]messageRec{}
	const chunk = 400
	for lo := 0; lo < len(sessions); lo += chunk {
		ids := sessions[lo:min(lo+chunk, len(sessions))]
		in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")"
		args := make([]any, len(ids))
		for i, id := range ids {
			args[i] = id
		}
		rows, err := tx.QueryContext(ctx, "SELECT "+txt("id")+", "+txt("session_id")+", "+num("time_created")+", "+txt("data")+
			" FROM message WHERE session_id IN "+in+" ORDER BY session_id, time_created, id", args...)
		if err != nil {
			return nil, wrapDB("read messages", err)
		}
		for rows.Next() {
			var m messageRec
			var sess string
			if err := rows.Scan(&m.ID, &sess, &m.Created, &m.Data); err != nil {
				rows.Close()
				return nil, scanFailed("read messages", err)
			}
			msgs[sess] = append(msgs[sess], m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, wrapDB("read messages", err)
		}
		index := map[string]*messageRec{}
		for _, id := range ids {
			for i := range msgs[id] {
				index[msgs[id][i].ID] = &msgs[id][i]
			}
		}
		rows, err = tx.QueryContext(ctx, "SELECT "+txt("message_id")+", "+txt("data")+" FROM part WHERE session_id IN "+in+" ORDER BY message_id, id", args...)
		if err != nil {
			return nil, wrapDB("read parts", err)
		}
		for rows.Next() {
			var id string
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				rows.Close()
				return nil, scanFailed("read parts", err)
			}
			if m := index[id]; m != nil {
				m.Parts = append(m.Parts, data)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, wrapDB("read parts", err)
		}
	}
	return msgs, nil
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
	rows, err := db.QueryContext(ctx, "SELECT "+txt("id")+", "+num("tokens_input")+" + "+num("tokens_output")+" + "+num("tokens_reasoning")+" + "+num("tokens_cache_read")+" + "+num("tokens_cache_write")+" FROM session")
	if err != nil {
		return nil, wrapDB("read sessions", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, scanFailed("read sessions", err)
		}
		out[id] = n
	}
	return out, wrapDB("read sessions", rows.Err())
}

// IsDB reports whether path is an OpenCode store: an SQLite file with the
// tables session, message and part. The 16-byte header is checked first so
// that no other file is handed to SQLite.
func IsDB(path string) bool {
	if !sqlitero.IsSQLite(path) {
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

// openRO opens a live store read-only (sqlitero.Open): OpenCode writes it.
func openRO(ctx context.Context, path string) (*sql.DB, error) {
	db, err := sqlitero.Open(ctx, path)
	if err != nil {
		return nil, wrapDB("open database", err)
	}
	return db, nil
}

// columns returns the column names of a table (none when it is missing).
func columns(ctx context.Context, db querier, table string) (map[string]bool, error) {
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

// querier is a database or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// wrapDB prefixes an SQLite error with what was being done and marks the
// transient ones with ErrBusy. SQLite's messages name the condition, never
// row content.
// txt and num read a column as the type its rows should hold, whatever a
// row holds (SQLite keeps any value in any column): text, and an integer
// (0 for text that is not one); NULL as "" and 0. A row of a damaged or
// hostile store then reads as it can, rather than failing the read of
// every session with an error that quotes its value.
func txt(col string) string { return "coalesce(CAST(" + col + " AS TEXT), '')" }
func num(col string) string { return "coalesce(CAST(" + col + " AS INTEGER), 0)" }

// scanFailed is the error of a row that could not be read into its Go
// value: database/sql's own quotes the value, which is the log's.
func scanFailed(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("opencode: %s: a row holds a value its column's type cannot take", what)
}

func wrapDB(what string, err error) error {
	if err == nil {
		return nil
	}
	if sqlitero.Transient(err) {
		return fmt.Errorf("opencode: %s: %w (%w)", what, ErrBusy, err)
	}
	return fmt.Errorf("opencode: %s: %w", what, err)
}
