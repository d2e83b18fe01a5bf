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
	"sort"
	"strconv"
	"strings"

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
func SchemaVersion() int {
	ms, _ := migrations()
	return len(ms)
}

// ErrSchemaTooNew means the team database was migrated by a newer agentmap.
var ErrSchemaTooNew = errors.New("the team database's schema is newer than this agentmap")

// Migrate brings the schema agentmap up to this build's version. A database
// already there needs no DDL privilege and takes no lock; otherwise the
// migrations run in one transaction under an advisory lock, so that
// daemons starting together wait for one another and none applies a
// migration twice.
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
		return fmt.Errorf("%w (schema %d, this build knows %d)", ErrSchemaTooNew, v, len(ms))
	}
	if v == len(ms) {
		return nil
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
			return fmt.Errorf("migrate: lock: %w", safeErr(err))
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS agentmap;
			CREATE TABLE IF NOT EXISTS agentmap.schema_migrations (
				version integer PRIMARY KEY,
				name text NOT NULL,
				applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("migrate: %w", safeErr(err))
		}
		var v int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM agentmap.schema_migrations").Scan(&v); err != nil {
			return fmt.Errorf("migrate: %w", safeErr(err))
		}
		for _, m := range ms[min(v, len(ms)):] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, safeErr(err))
			}
			if _, err := tx.Exec(ctx, "INSERT INTO agentmap.schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, safeErr(err))
			}
		}
		return nil
	})
}

// schemaVersion is the newest migration applied, 0 before the first.
func schemaVersion(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('agentmap.schema_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return 0, fmt.Errorf("read schema version: %w", safeErr(err))
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM agentmap.schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", safeErr(err))
	}
	return v, nil
}

// safeErr keeps what a server error says in general and drops its detail,
// hint and position, which can quote the values of a row: an error that
// reaches a log or the status names a SQLSTATE, never data.
func safeErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Errorf("server error %s (%s)", pe.Code, pe.Message)
	}
	return err
}
