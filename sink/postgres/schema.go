// Package postgres is the team sink: it sends the maps a daemon writes to a
// PostgreSQL database shared by a team, exactly once per version, and reads
// them back for the report. The daemon queues each flushed session in the
// state database (state.Outbox, in the flush's own transaction); a Sender
// pushes the queue in batches with an upsert keyed by (device, session) and
// guarded by the content hash, so duplicates, retries and crashes never
// leave a session twice or an old version over a new one.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the pg_advisory_xact_lock key under which migrations
// run: many daemons starting at once apply each migration once.
const migrationLock int64 = 0x6167656e746d6170 // "agentmap"

type migration struct {
	version int
	name    string
	sql     string
}

// migrations are the embedded files NNN_name.sql, in version order.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name is not NNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{v, e.Name(), string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the schema this build writes and reads.
func SchemaVersion() int { return schemaVersionOnce() }

// schemaVersionOnce reads the embedded migrations once: every push checks
// the version against it.
var schemaVersionOnce = sync.OnceValue(func() int {
	ms, _ := migrations()
	return len(ms)
})

// ErrSchemaTooNew means the team database was migrated by a newer agentmap.
var ErrSchemaTooNew = errors.New("the team database's schema is newer than this agentmap")

// ErrSchemaOld means the team database's schema is behind this build's
// (restored from an older backup, say): `agentmap sink migrate` as the
// schema's owner brings it up.
var ErrSchemaOld = errors.New("the team database's schema is older than this agentmap")

// ErrSchemaDamaged means a table or view of the schema is missing.
var ErrSchemaDamaged = errors.New("the team database's schema is damaged")

// ownerHint is what a role that may not create or read the schema is told.
const ownerHint = "run `agentmap sink migrate` as the schema's owner and apply docs/team-database-grants.sql to this role (docs/team-database.md)"

// tooNew is the error of a schema newer than this build's, the same at
// start and at each push.
func tooNew(v, known int) error {
	return fmt.Errorf("%w (schema %d, this build knows %d): it refuses to write; upgrade agentmap on this machine, the queue waits meanwhile", ErrSchemaTooNew, v, known)
}

// Migrate brings the schema agentmap up to this build's version and checks
// that every table and view of it is there. A database already at the
// version needs no DDL privilege and takes no lock; otherwise the
// migrations run in one transaction under an advisory lock, so that
// daemons starting together wait for one another and none applies a
// migration twice. The schema itself is created only when it does not
// exist: PostgreSQL checks CREATE on the database before IF NOT EXISTS,
// and the owner of a schema an administrator made has no such privilege.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	v, err := schemaVersion(ctx, pool)
	if err != nil {
		return err
	}
	if v > len(ms) {
		return tooNew(v, len(ms))
	}
	if v < len(ms) {
		if err := migrate(ctx, pool, ms); err != nil {
			return err
		}
	}
	return checkObjects(ctx, pool, ms)
}

func migrate(ctx context.Context, pool *pgxpool.Pool, ms []migration) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
			return fmt.Errorf("migrate: lock: %w", safeErr(err))
		}
		var schema, table bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'agentmap'),
			EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
				WHERE n.nspname = 'agentmap' AND c.relname = 'schema_migrations')`).Scan(&schema, &table); err != nil {
			return fmt.Errorf("migrate: %w", withHint(safeErr(err)))
		}
		if !schema {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA agentmap"); err != nil {
				err = safeErr(err)
				var se *ServerError
				if errors.As(err, &se) && se.Code == "42501" {
					return fmt.Errorf("migrate: the schema agentmap does not exist and this role may not create it: %w; as the database's administrator, CREATE SCHEMA agentmap AUTHORIZATION <the owner's role>, then %s", err, ownerHint)
				}
				return fmt.Errorf("migrate: create the schema agentmap: %w", err)
			}
		}
		if !table {
			if _, err := tx.Exec(ctx, `CREATE TABLE agentmap.schema_migrations (
				version integer PRIMARY KEY,
				name text NOT NULL,
				applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
				return fmt.Errorf("migrate: %w", withHint(safeErr(err)))
			}
		}
		var v int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM agentmap.schema_migrations").Scan(&v); err != nil {
			return fmt.Errorf("migrate: %w", withHint(safeErr(err)))
		}
		if v > len(ms) {
			return tooNew(v, len(ms))
		}
		for _, m := range ms[v:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, withHint(safeErr(err)))
			}
			if _, err := tx.Exec(ctx, "INSERT INTO agentmap.schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, withHint(safeErr(err)))
			}
		}
		return nil
	})
}

// objectPattern finds the tables and views a migration creates.
var objectPattern = regexp.MustCompile(`(?im)^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?agentmap\.(\w+)`)

// objects are the tables and views of the schema at this build's version,
// "agentmap.name", in the order the migrations create them.
func objects(ms []migration) []string {
	out := []string{"agentmap.schema_migrations"}
	for _, m := range ms {
		for _, g := range objectPattern.FindAllStringSubmatch(m.sql, -1) {
			if name := "agentmap." + strings.ToLower(g[2]); !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// checkObjects fails, naming them, when tables or views of the schema are
// missing (dropped by hand, or a partial restore): a schema at its version
// in schema_migrations is not necessarily whole.
func checkObjects(ctx context.Context, pool *pgxpool.Pool, ms []migration) error {
	var missing []string
	if err := pool.QueryRow(ctx, `SELECT coalesce(array_agg(o ORDER BY n), '{}') FROM unnest($1::text[]) WITH ORDINALITY AS t(o, n)
		WHERE to_regclass(o) IS NULL`, objects(ms)).Scan(&missing); err != nil {
		return fmt.Errorf("check the schema: %w", withHint(safeErr(err)))
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s missing (dropped?): restore it from a backup, or drop the schema agentmap and run `agentmap sink migrate` again, then `agentmap sink resend` on every machine",
			ErrSchemaDamaged, listed(missing))
	}
	return nil
}

func listed(names []string) string {
	if len(names) == 1 {
		return names[0] + " is"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " are"
}

// checkVersion is a push's check of the schema, in the push's own
// transaction: a shared hold of the migrations' lock (a migration running
// now finishes first, and none starts before the push ends), then the
// version. A daemon whose pool outlived a migration by a newer agentmap
// refuses to write as it does at start.
func checkVersion(ctx context.Context, tx pgx.Tx) error {
	b := &pgx.Batch{}
	b.Queue("SELECT pg_advisory_xact_lock_shared($1)", migrationLock)
	b.Queue("SELECT coalesce(max(version), 0) FROM agentmap.schema_migrations")
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("check the schema version: %w", withHint(safeErr(err)))
	}
	var v int
	if err := br.QueryRow().Scan(&v); err != nil {
		return fmt.Errorf("check the schema version: %w", withHint(safeErr(err)))
	}
	switch known := SchemaVersion(); {
	case v > known:
		return tooNew(v, known)
	case v < known:
		return fmt.Errorf("%w (schema %d, this build writes %d): run `agentmap sink migrate` as the schema's owner", ErrSchemaOld, v, known)
	}
	return br.Close()
}

// schemaVersion is the newest migration applied, 0 before the first.
func schemaVersion(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('agentmap.schema_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return 0, fmt.Errorf("read schema version: %w", withHint(safeErr(err)))
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM agentmap.schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", withHint(safeErr(err)))
	}
	return v, nil
}

// ServerError is an error the server answered with: its SQLSTATE and
// message, without the detail, hint and position, which can quote the
// values of a row.
type ServerError struct {
	Code, Message string
}

func (e *ServerError) Error() string { return fmt.Sprintf("server error %s (%s)", e.Code, e.Message) }

// safeErr keeps what a server error says in general and drops its detail,
// hint and position: an error that reaches a log or the status names a
// SQLSTATE, never data.
func safeErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &ServerError{Code: pe.Code, Message: pe.Message}
	}
	return err
}

// withHint adds what to do to a refusal for want of a privilege
// (insufficient_privilege): a role that connects before the schema was
// made, or without the grants.
func withHint(err error) error {
	var se *ServerError
	if errors.As(err, &se) && se.Code == "42501" {
		return fmt.Errorf("%w; %s", err, ownerHint)
	}
	return err
}

// Refused reports whether an error is the team database answering no
// (a newer, older or damaged schema, a missing privilege, a read-only
// server, a wrong password) rather than being out of reach: the connection
// failed, was cut, or timed out.
func Refused(err error) bool {
	if errors.Is(err, ErrSchemaTooNew) || errors.Is(err, ErrSchemaOld) || errors.Is(err, ErrSchemaDamaged) {
		return true
	}
	var se *ServerError
	if !errors.As(err, &se) {
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
