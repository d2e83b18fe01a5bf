package postgres

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ServerError is an error the server answered with: its SQLSTATE and
// message, without the detail, hint and position, which can quote the
// values of a row. At connection time the message is one of ours
// (connectFailure): the server's quotes the user and the database.
type ServerError struct {
	Code, Message string
}

func (e *ServerError) Error() string { return fmt.Sprintf("server error %s (%s)", e.Code, e.Message) }

// safeErr keeps what a server error says in general and drops its detail,
// hint and position: an error that reaches a log or the status names a
// SQLSTATE, never data. A failure to connect (the pool connects again at
// any time) becomes connectFailure's words, without pgx's text, which
// quotes the user, the database and the host as the connection string
// gave them.
func safeErr(err error) error {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return fmt.Errorf("connect: %w", connectFailure(err))
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &ServerError{Code: pe.Code, Message: pe.Message}
	}
	if lost := lostConnection(err); lost != nil {
		return lost
	}
	return err
}

// lostConnection says, in words of its own, how a connection that was
// made went away under a statement: the server closed it or the network
// cut it (pgx says "unexpected EOF", "conn closed" or the socket's error),
// or it timed out; nil for any other error (a cancellation is the
// caller's). Refused takes it for the database out of reach.
func lostConnection(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return nil
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err), errors.As(err, &ne) && ne.Timeout():
		// A statement waiting on a lock another session holds ends here
		// too, on a server that answers: the words say both.
		return connLost{"the server did not answer in time (it is out of reach, or the statement waited on a lock another session holds)", err}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, net.ErrClosed), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.As(err, &ne):
		return connLost{"the connection to the server was lost (the server closed it, or the network cut it)", err}
	}
	return nil
}

// connLost is a connection lost under a statement: its words, and the
// error it was (for errors.Is), whose text it does not repeat.
type connLost struct {
	words string
	cause error
}

func (e connLost) Error() string { return e.words }
func (e connLost) Unwrap() error { return e.cause }

// errConnect is a failure to connect that is not the server's answer: the
// words say what kind, never which host, user or database.
type errConnect string

func (e errConnect) Error() string { return string(e) }

// connectFailure says why a connection failed in words of its own, which
// quote nothing of the connection string: pgx's error names the user and
// the database, and its host, as it read them, so a password whose @ or /
// was not percent-encoded shows there in pieces. A server's refusal keeps
// its SQLSTATE (Refused tells a refusal from an outage by it).
func connectFailure(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &ServerError{Code: pe.Code, Message: connectRefusal(pe.Code)}
	}
	var dns *net.DNSError
	var hostErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	var certErr x509.CertificateInvalidError
	var verifyErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return errConnect("canceled")
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return errConnect("timed out")
	case errors.As(err, &dns):
		return errConnect("the host name does not resolve")
	case errors.Is(err, syscall.ECONNREFUSED):
		return errConnect("connection refused (is the server running there, on that port?)")
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return errConnect("no route to the host")
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return errConnect("the connection was reset")
	case errors.As(err, &hostErr), errors.As(err, &authErr), errors.As(err, &certErr), errors.As(err, &verifyErr):
		return errConnect("the server's TLS certificate is not trusted for this host (sslmode, sslrootcert)")
	case errors.As(err, &recordErr), strings.Contains(err.Error(), "tls:"):
		return errConnect("the TLS handshake failed (sslmode)")
	case strings.Contains(err.Error(), "server refused TLS connection"):
		return errConnect("the server does not accept TLS (sslmode)")
	}
	return errConnect("the connection failed")
}

// connectRefusal is what a server's refusal of a connection means, by its
// SQLSTATE.
func connectRefusal(code string) string {
	switch code {
	case "28P01":
		return "password authentication failed"
	case "28000":
		return "the server does not accept this role from here (pg_hba.conf), the role does not exist, or the server requires TLS (sslmode)"
	case "3D000":
		return "the database does not exist"
	case "42501":
		return "permission denied to connect to the database"
	case "53300":
		return "too many connections"
	case "57P03":
		return "the server is starting up or shutting down"
	case "42704", "22023":
		return "the server refused a connection parameter"
	}
	if strings.HasPrefix(code, "08") {
		return "connection failure"
	}
	return "the server refused the connection"
}

// inTx runs fn in a transaction on pool, as pgx.BeginFunc does, and keeps
// the errors of BEGIN (taking a connection can mean making one: a wrong
// password, a server gone) and of COMMIT (a serialization failure, a
// deferred constraint) what safeErr makes of any other, under what they
// are; fn's own errors are fn's.
func inTx(ctx context.Context, pool *pgxpool.Pool, what string, fn func(pgx.Tx) error) error {
	var ran bool
	var fnErr error
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ran = true
		fnErr = fn(tx)
		return fnErr
	})
	switch {
	case err == nil:
		return nil
	case !ran:
		return fmt.Errorf("%s: begin: %w", what, withHint(safeErr(err)))
	case fnErr != nil:
		return fnErr
	}
	return fmt.Errorf("%s: commit: %w", what, withHint(safeErr(err)))
}

// Refused reports whether an error is the team database answering no
// (a newer, older or damaged schema, a missing privilege, a read-only
// server, a wrong password) rather than being out of reach (the
// connection failed, was cut, or timed out) or a conflict that passes (a
// deadlock, a serialization failure, a lock that was not granted in
// time), which the next attempt may not meet.
func Refused(err error) bool {
	if errors.Is(err, ErrSchemaTooNew) || errors.Is(err, ErrSchemaOld) || errors.Is(err, ErrSchemaDamaged) || errors.Is(err, ErrNotOwner) {
		return true
	}
	var se *ServerError
	if !errors.As(err, &se) {
		return false
	}
	if conflict(err) {
		return false
	}
	switch se.Code[:min(2, len(se.Code))] {
	case "08", // connection exception
		"53", // insufficient resources (too many connections, disk full)
		"57", // operator intervention (shutdown, query canceled)
		"58": // system error
		return false
	}
	return true
}

// conflict reports whether an error is a transaction rolled back for
// another's sake: a serialization failure (40001), a deadlock (40P01) or
// a lock not granted within lock_timeout (55P03). Tried again, it passes.
func conflict(err error) bool {
	var se *ServerError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case "40001", "40P01", "55P03": // not 40002, a constraint that fails every time
		return true
	}
	return false
}
