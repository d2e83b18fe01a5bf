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

	"github.com/agentmap/agentmap/internal/regular"
	"modernc.org/sqlite"
)

// header is the first 16 bytes of every SQLite database file.
const header = "SQLite format 3\x00"

// IsSQLite reports whether the file at path starts with the SQLite header.
// It is checked before a file is handed to SQLite, so that a log or a
// half-written file is never opened as a database.
func IsSQLite(path string) bool {
	f, err := regular.Open(path)
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
	if err := regularFiles(path); err != nil {
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

// regularFiles reports an error unless the store at path is a regular
// file, and its -wal, -journal and -shm files too where they are: SQLite
// opens them blocking (the -journal in its check for a hot journal), and
// the open of a named pipe put in their place waits for a writer that may
// never come.
func regularFiles(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &os.PathError{Op: "open", Path: path, Err: &regular.NotRegularError{Kind: regular.Kind(fi.Mode())}}
	}
	for _, side := range []string{"-wal", "-journal", "-shm"} {
		if fi, err := os.Stat(path + side); err == nil && !fi.Mode().IsRegular() {
			return &os.PathError{Op: "open", Path: path + side, Err: &regular.NotRegularError{Kind: regular.Kind(fi.Mode())}}
		}
	}
	return nil
}

// uriEscape escapes what an SQLite URI filename may not hold literally.
func uriEscape(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// SQLite primary result codes that may mean "not now" rather than
// "never": a writer holds the lock, or a read met a page in the middle of
// being written (a store copied or checkpointed under us), which a store
// damaged for good looks like too.
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

// Transient reports whether err is an SQLite error worth retrying later:
// a lock (Locked) or a store that reads as damaged (Damaged), which a
// store rewritten under the reader does for a moment.
func Transient(err error) bool {
	return Locked(err) || Damaged(err)
}

// Locked reports whether err is SQLite finding the store locked by its
// writer (SQLITE_BUSY, SQLITE_LOCKED, or SQLITE_PROTOCOL: a race for a
// WAL's locks it lost): gone once the writer commits, in moments.
func Locked(err error) bool {
	switch primaryCode(err) {
	case codeBusy, codeLocked, codeProtocol:
		return true
	}
	return false
}

// Damaged reports whether err is SQLite finding the file malformed or no
// database (SQLITE_CORRUPT, SQLITE_NOTADB): a store damaged for good (cut
// short, overwritten) or one caught while it was being rewritten. Unlike a
// lock, nothing says it will soon pass.
func Damaged(err error) bool {
	switch primaryCode(err) {
	case codeCorrupt, codeNotADB:
		return true
	}
	return false
}

// messages are SQLite's own words for the primary result codes above
// (sqlite3_errstr), which an SQLite error's message starts with.
var messages = []struct {
	text string
	code int
}{
	{"database is locked", codeBusy},
	{"database table is locked", codeLocked},
	{"locking protocol", codeProtocol},
	{"database disk image is malformed", codeCorrupt},
	{"file is not a database", codeNotADB},
}

// primaryCode is the primary result code of the SQLite error err is or
// wraps, 0 for none. An agent's reader that marks an error with a
// sentinel of its own may keep SQLite's error as text only (cursor's and
// opencode's ErrBusy): its code is then told by SQLite's words for it.
func primaryCode(err error) int {
	if err == nil {
		return 0
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	msg := err.Error()
	for _, m := range messages {
		if strings.Contains(msg, m.text) {
			return m.code
		}
	}
	return 0
}
