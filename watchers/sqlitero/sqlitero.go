// Package sqlitero opens the SQLite stores of agents that keep their
// sessions in a database (Cursor, OpenCode) the one way agentmap may:
// read-only, beside a client that is writing it.
package sqlitero

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"

	"modernc.org/sqlite"
)

// header is the first 16 bytes of every SQLite database file.
const header = "SQLite format 3\x00"

// IsSQLite reports whether the file at path starts with the SQLite header.
// It is checked before a file is handed to SQLite, so that a log or a
// half-written file is never opened as a database.
func IsSQLite(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	hdr := make([]byte, len(header))
	n, _ := f.Read(hdr)
	return n == len(header) && string(hdr) == header
}

// Open opens a live store read-only: not immutable (its client writes it),
// a read waits at most two seconds for the writer, and query_only forbids
// any write from this connection. One connection, pinged, so that a file
// that is missing or no database fails here and not at the first query.
func Open(ctx context.Context, path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	dsn := "file:" + uriEscape(path) + "?mode=ro&_pragma=busy_timeout(2000)&_pragma=query_only(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// uriEscape escapes what an SQLite URI filename may not hold literally.
func uriEscape(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// SQLite primary result codes that mean "not now" rather than "never":
// a writer holds the lock, or a read met a page in the middle of being
// written (a store copied or checkpointed under us).
const (
	codeBusy     = 5
	codeLocked   = 6
	codeCorrupt  = 11
	codeProtocol = 15
	codeNotADB   = 26

	// codeReadOnlyRollback is SQLITE_READONLY_ROLLBACK: a hot journal (a
	// writer stopped mid-write) that a read-only connection may not roll
	// back. It stays until the agent opens the store again.
	codeReadOnlyRollback = 776
)

// HotJournal reports whether err is SQLite refusing a read-only read
// because the store has a hot journal to roll back first.
func HotJournal(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == codeReadOnlyRollback
}

// Transient reports whether err is an SQLite error worth retrying later.
func Transient(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case codeBusy, codeLocked, codeCorrupt, codeProtocol, codeNotADB:
		return true
	}
	return false
}
