package cursor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentmap/agentmap/watchers/sqlitero"
)

// ErrBusy wraps the errors of a database that is locked by its writer or
// caught half-written: the caller retries later. It is never fatal.
var ErrBusy = errors.New("database busy or changing, retry later")

// openRO opens a live Cursor database read-only (sqlitero.Open): Cursor
// is writing it.
func openRO(ctx context.Context, path string) (*sql.DB, error) {
	db, err := sqlitero.Open(ctx, path)
	if err != nil {
		return nil, wrapDB("open database", err)
	}
	return db, nil
}

// wrapDB prefixes an SQLite error with what was being done, and marks the
// transient ones with ErrBusy. SQLite's messages name the condition, never
// row content.
func wrapDB(what string, err error) error {
	if sqlitero.Transient(err) {
		return fmt.Errorf("cursor: %s: %w (%w)", what, ErrBusy, err)
	}
	return fmt.Errorf("cursor: %s: %w", what, err)
}

// tables returns the names of the tables of a database.
func tables(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return nil, wrapDB("list tables", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, wrapDB("list tables", err)
		}
		out[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, wrapDB("list tables", err)
	}
	return out, nil
}

// scanKeys returns the keys of table that start with prefix.
func scanKeys(ctx context.Context, db *sql.DB, table, prefix string) ([]string, error) {
	lo, hi := prefixRange(prefix)
	rows, err := db.QueryContext(ctx, "SELECT key FROM "+table+" WHERE key >= ? AND key < ? ORDER BY key", lo, hi)
	if err != nil {
		return nil, wrapDB("read "+table, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k sql.NullString
		if err := rows.Scan(&k); err != nil {
			return nil, wrapDB("read "+table, err)
		}
		if k.Valid {
			out = append(out, k.String)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrapDB("read "+table, err)
	}
	return out, nil
}

// prefixRange is the key range [lo, hi) of the keys that start with prefix:
// hi is the prefix with its last byte incremented (every prefix used here
// ends in ':' or a letter, never in 0xff).
func prefixRange(prefix string) (lo, hi string) {
	return prefix, prefix[:len(prefix)-1] + string(rune(prefix[len(prefix)-1]+1))
}

// getKey returns the value of one key, or nil when absent or NULL.
func getKey(ctx context.Context, db *sql.DB, table, key string) ([]byte, error) {
	var v []byte
	err := db.QueryRowContext(ctx, "SELECT value FROM "+table+" WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapDB("read "+table, err)
	}
	return v, nil
}

// hasTables reports whether the file at path is an SQLite database with all
// the named tables. It reads the 16-byte header first so that a non-database
// file is never handed to SQLite.
func hasTables(path string, names ...string) bool {
	if !sqlitero.IsSQLite(path) {
		return false
	}
	ctx := context.Background()
	db, err := openRO(ctx, path)
	if err != nil {
		return false
	}
	defer db.Close()
	ts, err := tables(ctx, db)
	if err != nil {
		return false
	}
	for _, n := range names {
		if !ts[n] {
			return false
		}
	}
	return true
}
